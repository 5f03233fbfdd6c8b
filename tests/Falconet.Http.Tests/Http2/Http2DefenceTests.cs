using System;
using System.Collections.Generic;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Http2;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Shouldly;
using static Falconet.Http.Tests.Infrastructure.Http2Client;

namespace Falconet.Http.Tests.Http2;

/// <summary>
/// The attacks a hostile HTTP/2 peer tries first, each sent over a socket: every one meets a named limit and a bounded
/// answer, and the server keeps no more memory or work than the limit allows.
/// </summary>
public class Http2DefenceTests : Http2TestBase
{
    private static IEnumerable<byte[]> OpenAndReset(int count, int firstStream = 1, bool endStream = false)
    {
        byte[] block = Request(endStream ? "GET" : "POST", "/");
        Http2FrameFlags flags = Http2FrameFlags.EndHeaders | (endStream ? Http2FrameFlags.EndStream : 0);
        for (int i = 0; i < count; i++)
        {
            int id = firstStream + 2 * i;
            yield return FrameBytes(Http2FrameType.Headers, flags, id, block);
            yield return FrameBytes(Http2FrameType.RstStream, 0, id, UInt32((uint)Http2ErrorCode.Cancel));
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Rapid_reset_past_the_stream_reset_rate_is_answered_with_ENHANCE_YOUR_CALM()
    {
        int handled = 0;
        (TestServer host, Http2Client client) = await StartWithClientAsync(context =>
        {
            Interlocked.Increment(ref handled);
            return default;
        });
        await using TestServer _ = host;
        using Http2Client __ = client;
        int burst = new Http2Limits().StreamResetRate.Burst;

        // CVE-2023-44487: open a stream and reset it at once, again and again.
        Task sending = client.SendInBackground(Concat(OpenAndReset(burst + 100)));

        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.EnhanceYourCalm);
        (await client.IsClosedAsync()).ShouldBeTrue();
        await sending;
        Volatile.Read(ref handled).ShouldBeLessThanOrEqualTo(burst + 1 + 33);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Streams_reset_while_their_handlers_still_run_keep_counting_until_those_return()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int running = 0;
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            Interlocked.Increment(ref running);
            await release.Task;
        }, options => options.Http2.MaxConcurrentStreams = 10);
        await using TestServer _ = host;
        using Http2Client __ = client;
        using var releasing = new Releaser(release);

        // Each reset frees a place in SETTINGS_MAX_CONCURRENT_STREAMS, but not the handler's work: the server takes no more than
        // twice the limit in handlers, and refuses the rest. The requests end with their HEADERS, so each handler starts
        // before its reset is read (one with a body starts after the read batch, and a reset in it means it never does).
        await client.SendAsync(Concat(OpenAndReset(25, endStream: true)));
        (await client.ReadRstStreamAsync(41)).ShouldBe(Http2ErrorCode.RefusedStream);

        Volatile.Read(ref running).ShouldBe(20);
        // Once the handlers return, new streams are taken again (a refused stream may be retried: REFUSED_STREAM says it was
        // not processed).
        release.SetResult();
        Http2Response response;
        int stream = 51;
        do
        {
            await Task.Delay(20);
            await client.WriteHeadersAsync(stream, Request(), endStream: true);
            response = await client.ReadResponseAsync(stream);
            stream += 2;
        }
        while (response.Reset == Http2ErrorCode.RefusedStream && stream < 151);

        response.StatusCode.ShouldBe(200);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_stream_past_SETTINGS_MAX_CONCURRENT_STREAMS_is_refused_and_may_be_retried()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        (TestServer host, Http2Client client) = await StartWithClientAsync(async _ => await release.Task);
        await using TestServer _ = host;
        using Http2Client __ = client;
        using var releasing = new Releaser(release);
        client.ServerSettings[3].ShouldBe(100u);

        for (int i = 0; i < 100; i++)
        {
            await client.WriteHeadersAsync(1 + 2 * i, Request(), endStream: true);
        }

        await client.WriteHeadersAsync(201, Request(), endStream: true);
        (await client.ReadRstStreamAsync(201)).ShouldBe(Http2ErrorCode.RefusedStream);

        release.SetResult();
        await client.ReadResponseAsync(199);
        await client.WriteHeadersAsync(203, Request(), endStream: true);
        (await client.ReadResponseAsync(203)).StatusCode.ShouldBe(200);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_CONTINUATION_flood_is_cut_at_the_frame_count_with_ENHANCE_YOUR_CALM()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ => default);
        await using TestServer _ = host;
        using Http2Client __ = client;
        int max = new Http2Limits().MaxContinuationFrames;
        var frames = new List<byte[]> { FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndStream, 1, Request()) };
        for (int i = 0; i <= max; i++)
        {
            // One byte each: a block that never ends and barely grows (CVE-2024-27316 and kin).
            frames.Add(FrameBytes(Http2FrameType.Continuation, 0, 1, [0x00]));
        }

        await client.SendAsync(Concat(frames));

        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.EnhanceYourCalm);
        (await client.IsClosedAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_header_block_past_its_size_limit_is_cut_with_ENHANCE_YOUR_CALM_before_it_is_kept()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ => default);
        await using TestServer _ = host;
        using Http2Client __ = client;
        var frames = new List<byte[]> { FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndStream, 1, Request()) };
        for (int i = 0; i < 5; i++)
        {
            frames.Add(FrameBytes(Http2FrameType.Continuation, 0, 1, new byte[16 * 1024]));
        }

        await client.SendAsync(Concat(frames));

        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.EnhanceYourCalm);
        (await client.IsClosedAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_HPACK_bomb_that_refers_to_one_large_entry_again_and_again_is_refused_with_431()
    {
        bool called = false;
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ =>
        {
            called = true;
            return default;
        });
        await using TestServer _ = host;
        using Http2Client __ = client;

        // A 4,000-byte value into the dynamic table once (literal with incremental indexing), then 20 references of one byte
        // each: an 80 KB header list from a block of about 4 KB.
        var block = new List<byte>(Request());
        block.Add(0x40);
        block.Add(6);
        block.AddRange("x-bomb"u8.ToArray());
        block.Add(0x7F);
        block.AddRange(new byte[] { 0xA1, 0x1E });
        block.AddRange(Encoding.ASCII.GetBytes(new string('a', 4000)));
        for (int i = 0; i < 20; i++)
        {
            block.Add(0x80 | 62);
        }

        await client.WriteHeadersAsync(1, block.ToArray(), endStream: true);

        (await client.ReadResponseAsync(1)).StatusCode.ShouldBe(431);
        called.ShouldBeFalse();

        // The table stayed in step: the next request decodes.
        await client.WriteHeadersAsync(3, Request(), endStream: true);
        (await client.ReadResponseAsync(3)).StatusCode.ShouldBe(200);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("PING")]
    [InlineData("SETTINGS")]
    public async Task A_flood_of_frames_the_server_must_answer_is_cut_with_ENHANCE_YOUR_CALM(string kind)
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ => default);
        await using TestServer _ = host;
        using Http2Client __ = client;
        byte[] frame = kind == "PING"
            ? FrameBytes(Http2FrameType.Ping, 0, 0, new byte[8])
            : FrameBytes(Http2FrameType.Settings, 0, 0, [0, 4, 0, 1, 0, 0]);
        var frames = new List<byte[]>();
        for (int i = 0; i <= new Http2Limits().ControlFrameRate.Burst; i++)
        {
            frames.Add(frame);
        }

        Task sending = client.SendInBackground(Concat(frames));

        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.EnhanceYourCalm);
        (await client.IsClosedAsync()).ShouldBeTrue();
        await sending;
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_flood_of_empty_DATA_frames_is_cut_with_ENHANCE_YOUR_CALM()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        (TestServer host, Http2Client client) = await StartWithClientAsync(async _ => await release.Task);
        await using TestServer _ = host;
        using Http2Client __ = client;
        using var releasing = new Releaser(release);
        var frames = new List<byte[]> { FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 1, Request("POST", "/")) };
        for (int i = 0; i <= new Http2Limits().EmptyFrameRate.Burst; i++)
        {
            frames.Add(FrameBytes(Http2FrameType.Data, 0, 1, []));
        }

        Task sending = client.SendInBackground(Concat(frames));

        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.EnhanceYourCalm);
        await sending;
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Zero_increment_WINDOW_UPDATE_frames_reset_streams_until_the_reset_rate_closes_the_connection()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        (TestServer host, Http2Client client) = await StartWithClientAsync(async _ => await release.Task,
            options => options.Http2.StreamResetRate = new Http2FrameRate(20, 0));
        await using TestServer _ = host;
        using Http2Client __ = client;
        using var releasing = new Releaser(release);
        var frames = new List<byte[]>();
        for (int i = 0; i < 25; i++)
        {
            int id = 1 + 2 * i;
            frames.Add(FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, id, Request("POST", "/")));
            frames.Add(FrameBytes(Http2FrameType.WindowUpdate, 0, id, UInt32(0)));
        }

        Task sending = client.SendInBackground(Concat(frames));

        (await client.ReadRstStreamAsync(1)).ShouldBe(Http2ErrorCode.ProtocolError);
        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.EnhanceYourCalm);
        await sending;
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_client_that_never_opens_its_window_is_cut_off_by_the_minimum_response_data_rate(bool connectionWindow)
    {
        var writeFailed = new TaskCompletionSource<Exception>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartServerAsync(async context =>
        {
            try
            {
                for (int i = 0; i < 20; i++)
                {
                    await context.Response.WriteAsync(new byte[10_000]);
                }

                await context.Response.FlushAsync();
            }
            catch (Exception exception)
            {
                writeFailed.TrySetResult(exception);
                throw;
            }
        }, options => options.MinResponseDataRate = new MinDataRate(64 * 1024, TimeSpan.FromSeconds(1)));
        using Http2Client client = Http2Client.Connect(host);

        // Either every stream starts with no window at all, or the connection window stays at its first 65,535 bytes. What a
        // stream waits to send is at most about its write-behind bound: its wait must end within that many bytes at the rate.
        await client.StartAsync(openWindow: false, settings: connectionWindow ? [] : [(4, 0u)]);
        await client.WriteHeadersAsync(1, Request(), endStream: true);

        (await client.ReadRstStreamAsync(1)).ShouldBe(Http2ErrorCode.Cancel);
        (await writeFailed.Task.WaitAsync(TestTimeouts.Operation)).ShouldBeAssignableTo<System.IO.IOException>();
        await client.WriteHeadersAsync(3, Request("HEAD", "/"), endStream: true);
        (await client.ReadResponseAsync(3)).StatusCode.ShouldBe(200);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_sends_without_reading_the_answers_holds_the_server_to_its_output_bound()
    {
        await using TestServer host = await StartServerAsync(_ => default, options =>
        {
            options.Http2.ControlFrameRate = new Http2FrameRate(int.MaxValue, 0);
            options.MinResponseDataRate = null;
        });
        using Http2Client client = Http2Client.Connect(host);
        client.Socket.ReceiveBufferSize = 4096;
        await client.StartAsync();
        byte[] pings = Concat(RepeatPing(60_000));

        // The server answers every PING; once its answers pile up at the bound it stops reading, and the client's send stalls.
        using var stalled = new CancellationTokenSource(TimeSpan.FromSeconds(3));
        try
        {
            await client.Socket.SendAsync(pings, SocketFlags.None, stalled.Token);
        }
        catch (OperationCanceledException)
        {
        }

        client.Dispose();
        await host.Server.StopAsync();
        host.Server.PeakConnectionOutputBuffered.ShouldBeLessThanOrEqualTo(64 * 1024 + 8 * 1024);

        static IEnumerable<byte[]> RepeatPing(int count)
        {
            byte[] ping = FrameBytes(Http2FrameType.Ping, 0, 0, new byte[8]);
            for (int i = 0; i < count; i++)
            {
                yield return ping;
            }
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_header_block_left_unfinished_is_cut_at_the_request_headers_timeout()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ => default, options => options.RequestHeadersTimeout = TimeSpan.FromSeconds(1));
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.WriteHeadersAsync(1, Request(), endStream: true, endHeaders: false);

        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.EnhanceYourCalm);
        (await client.IsClosedAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_idle_connection_is_closed_with_GOAWAY_at_the_keep_alive_timeout()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ => default, options => options.KeepAliveTimeout = TimeSpan.FromSeconds(1));
        await using TestServer _ = host;
        using Http2Client __ = client;
        await client.WriteHeadersAsync(1, Request(), endStream: true);
        await client.ReadResponseAsync(1);

        (Http2ErrorCode code, int last) = await client.ReadGoAwayAsync();

        code.ShouldBe(Http2ErrorCode.NoError);
        last.ShouldBe(1);
        (await client.IsClosedAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_never_acknowledges_the_server_SETTINGS_gets_SETTINGS_TIMEOUT()
    {
        await using TestServer host = await StartServerAsync(_ => default, options => options.Http2.SettingsAckTimeout = TimeSpan.FromSeconds(1));
        using Http2Client client = Http2Client.Connect(host);

        await client.StartAsync(openWindow: true, acknowledge: false);

        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.SettingsTimeout);
        (await client.IsClosedAsync()).ShouldBeTrue();
    }

    /// <summary>Lets held handlers finish when the test ends, however it ends.</summary>
    private sealed class Releaser(TaskCompletionSource release) : IDisposable
    {
        public void Dispose() => release.TrySetResult();
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class Http2DefenceTestsOnLibuv : Http2DefenceTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests over TLS.</summary>
public sealed class Http2DefenceTestsOverTls : Http2DefenceTests
{
    protected override bool Https => true;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class Http2DefenceTestsOnIoUring : Http2DefenceTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
