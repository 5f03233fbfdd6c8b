using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Http2;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Shouldly;

namespace Falconet.Http.Tests.Http2;

/// <summary>Requests over HTTP/2 reach the same handler, objects and header collections as over HTTP/1.1.</summary>
public class Http2ExchangeTests : Http2TestBase
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_HttpClient_request_over_HTTP_2_reaches_the_handler_with_its_protocol_and_headers()
    {
        string? protocol = null;
        HttpProtocolVersion version = default;
        string? host = null;
        string? tenant = null;
        int streamId = 0;
        await using TestServer server = await StartServerAsync(context =>
        {
            protocol = context.Request.Protocol;
            version = context.Request.ProtocolVersion;
            host = context.Request.Host;
            tenant = context.Request.Headers["x-tenant"];
            streamId = context.StreamId;
            context.Response.Headers.ContentType = "text/plain";
            context.Response.Write("Hello over h2"u8);
            return default;
        });
        using HttpClient client = CreateHttp2Client(server);
        using var request = new HttpRequestMessage(HttpMethod.Get, "/hello?x=1") { Version = HttpVersion.Version20, VersionPolicy = HttpVersionPolicy.RequestVersionExact };
        request.Headers.Add("X-Tenant", "blue");
        using HttpResponseMessage response = await client.SendAsync(request);

        response.Version.ShouldBe(HttpVersion.Version20);
        response.StatusCode.ShouldBe(HttpStatusCode.OK);
        (await response.Content.ReadAsStringAsync()).ShouldBe("Hello over h2");
        response.Content.Headers.ContentLength.ShouldBe(13);
        response.Headers.Server.ToString().ShouldBe("Falconet");
        response.Headers.Date.ShouldNotBeNull();
        protocol.ShouldBe("HTTP/2");
        version.ShouldBe(HttpProtocolVersion.Http2);
        host.ShouldBe(server.EndPoint.ToString());
        tenant.ShouldBe("blue");
        streamId.ShouldBe(1);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Path_query_and_method_come_from_the_pseudo_headers()
    {
        var seen = new ConcurrentQueue<string>();
        (TestServer host, Http2Client client) = await StartWithClientAsync(context =>
        {
            seen.Enqueue($"{context.Request.MethodName} {context.Request.Path} {context.Request.Query} {context.Request.Method} {context.Request.TargetForm}");
            return default;
        });
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.WriteHeadersAsync(1, Http2Client.Request("PATCH", "/a/b?c=d"), endStream: true);
        (await client.ReadResponseAsync(1)).StatusCode.ShouldBe(200);
        await client.WriteHeadersAsync(3, Http2Client.Request("PURGE", "/x"), endStream: true);
        (await client.ReadResponseAsync(3)).StatusCode.ShouldBe(200);
        await client.WriteHeadersAsync(5, Http2Client.Request("OPTIONS", "*"), endStream: true);
        (await client.ReadResponseAsync(5)).StatusCode.ShouldBe(200);

        seen.ToArray().ShouldBe(["PATCH /a/b c=d Patch Origin", "PURGE /x  Custom Origin", "OPTIONS *  Options Asterisk"]);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_hundred_concurrent_requests_share_one_connection_and_each_gets_its_own_answer()
    {
        await using TestServer server = await StartServerAsync(async context =>
        {
            await Task.Yield();
            context.Response.Write(Encoding.ASCII.GetBytes(context.Request.Path));
        });
        using HttpClient client = CreateHttp2Client(server);

        string[] bodies = await Task.WhenAll(Enumerable.Range(0, 100).Select(i => client.GetStringAsync($"/item/{i}")));

        bodies.ShouldBe(Enumerable.Range(0, 100).Select(i => $"/item/{i}").ToArray());
        server.Server.ConnectionCount.ShouldBe(1);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(100_000)]
    [InlineData(3 * 1024 * 1024)]
    public async Task A_request_body_is_echoed_whole_through_both_flow_control_windows(int length)
    {
        await using TestServer server = await StartServerAsync(async context =>
        {
            // Read whole before the echo starts: HttpClient reads no response before it has sent the whole request body,
            // so an echo that streams both ways would wait on it once both windows are full (as with any server).
            var received = new System.IO.MemoryStream();
            byte[] buffer = new byte[8192];
            int read;
            while ((read = await context.Request.BodyReader.ReadAsync(buffer)) > 0)
            {
                received.Write(buffer, 0, read);
            }

            byte[] echo = received.ToArray();
            for (int offset = 0; offset < echo.Length; offset += 10_000)
            {
                await context.Response.WriteAsync(echo.AsMemory(offset, Math.Min(10_000, echo.Length - offset)));
            }
        });
        using HttpClient client = CreateHttp2Client(server);
        byte[] body = RandomNumberGenerator.GetBytes(length);

        using HttpResponseMessage response = await client.PostAsync("/echo", new ByteArrayContent(body));

        response.Version.ShouldBe(HttpVersion.Version20);
        (await response.Content.ReadAsByteArrayAsync()).ShouldBe(body);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_handler_that_waits_does_not_hold_up_the_other_streams_of_its_connection()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            if (context.Request.Path == "/slow")
            {
                await release.Task;
            }

            context.Response.Write(Encoding.ASCII.GetBytes(context.Request.Path));
        });
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.WriteHeadersAsync(1, Http2Client.Request(path: "/slow"), endStream: true);
        await client.WriteHeadersAsync(3, Http2Client.Request(path: "/fast"), endStream: true);
        Http2Response fast = await client.ReadResponseAsync(3);
        fast.BodyText.ShouldBe("/fast");
        client.Others.ShouldNotContain(frame => frame.StreamId == 1);

        release.SetResult();
        (await client.ReadResponseAsync(1)).BodyText.ShouldBe("/slow");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Response_trailers_follow_the_body_in_a_last_HEADERS_frame()
    {
        bool supported = false;
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            supported = context.Response.SupportsTrailers;
            context.Response.Headers.ContentType = "application/grpc";
            await context.Response.WriteAsync("payload"u8.ToArray());
            await context.Response.FlushAsync();
            context.Response.Trailers["grpc-status"] = "0";
            context.Response.Trailers["grpc-message"] = "ok";
        });
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.WriteHeadersAsync(1, Http2Client.Request("POST", "/svc/Call"), endStream: true);
        Http2Response response = await client.ReadResponseAsync(1);

        supported.ShouldBeTrue();
        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe("payload");
        response.Headers.ShouldNotContainKey("content-length");
        response.Trailers.ShouldNotBeNull();
        response.Trailers["grpc-status"].ShouldBe("0");
        response.Trailers["grpc-message"].ShouldBe("ok");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_HEAD_response_carries_the_length_a_GET_would_and_no_DATA()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(context =>
        {
            context.Response.Write("twelve bytes"u8);
            return default;
        });
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.WriteHeadersAsync(1, Http2Client.Request("HEAD", "/"), endStream: true);
        Http2Response response = await client.ReadResponseAsync(1);

        response.StatusCode.ShouldBe(200);
        response.Headers["content-length"].ShouldBe("12");
        response.DataFrames.ShouldBe(0);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_request_that_expects_100_continue_gets_it_when_the_handler_reads_the_body()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            byte[] buffer = new byte[64];
            int read = await context.Request.BodyReader.ReadAsync(buffer);
            context.Response.Write(buffer.AsSpan(0, read));
        });
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.WriteHeadersAsync(1, Http2Client.Request("POST", "/upload", fields: [("expect", "100-continue"), ("content-length", "4")]), endStream: false);
        Frame interim = await client.ReadUntilAsync(frame => frame.Type == Http2FrameType.Headers);
        interim.HasFlag(Http2FrameFlags.EndStream).ShouldBeFalse();
        await client.WriteDataAsync(1, "body"u8, endStream: true);
        Http2Response response = await client.ReadResponseAsync(1);

        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe("body");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_exception_before_the_response_starts_is_answered_500_and_after_it_started_the_stream_is_reset()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            if (context.Request.Path == "/late")
            {
                await context.Response.WriteAsync("partial"u8.ToArray());
                await context.Response.FlushAsync();
            }

            throw new InvalidOperationException("handler failure");
        });
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.WriteHeadersAsync(1, Http2Client.Request(path: "/early"), endStream: true);
        Http2Response early = await client.ReadResponseAsync(1);
        await client.WriteHeadersAsync(3, Http2Client.Request(path: "/late"), endStream: true);
        Http2Response late = await client.ReadResponseAsync(3);
        await client.WriteHeadersAsync(5, Http2Client.Request(path: "/early"), endStream: true);
        Http2Response afterwards = await client.ReadResponseAsync(5);

        early.StatusCode.ShouldBe(500);
        early.Headers["content-length"].ShouldBe("0");
        late.StatusCode.ShouldBe(200);
        late.Reset.ShouldBe(Http2ErrorCode.InternalError);
        afterwards.StatusCode.ShouldBe(500);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_handler_resets_its_stream_with_the_code_it_chooses_and_the_connection_goes_on()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(context =>
        {
            if (context.Request.Path == "/reset")
            {
                context.Reset((int)Http2ErrorCode.Cancel);
            }

            return default;
        });
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.WriteHeadersAsync(1, Http2Client.Request(path: "/reset"), endStream: true);
        (await client.ReadRstStreamAsync(1)).ShouldBe(Http2ErrorCode.Cancel);
        await client.WriteHeadersAsync(3, Http2Client.Request(path: "/ok"), endStream: true);
        (await client.ReadResponseAsync(3)).StatusCode.ShouldBe(200);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_reset_cancels_RequestAborted_and_fails_the_pending_body_read()
    {
        var aborted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var readFailed = new TaskCompletionSource<Exception>(TaskCreationOptions.RunContinuationsAsynchronously);
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            context.RequestAborted.Register(() => aborted.TrySetResult());
            try
            {
                await context.Request.BodyReader.ReadAsync(new byte[16]);
            }
            catch (Exception exception)
            {
                readFailed.TrySetResult(exception);
            }
        });
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.WriteHeadersAsync(1, Http2Client.Request("POST", "/upload"), endStream: false);
        await Task.Delay(100);
        await client.WriteRstStreamAsync(1, Http2ErrorCode.Cancel);

        await aborted.Task.WaitAsync(TestTimeouts.Operation);
        (await readFailed.Task.WaitAsync(TestTimeouts.Operation)).ShouldBeOfType<BadHttpRequestException>();
        await client.WriteHeadersAsync(3, Http2Client.Request(), endStream: true);
        (await client.ReadResponseAsync(3)).StatusCode.ShouldBe(200);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_response_larger_than_the_client_window_waits_for_WINDOW_UPDATE_and_arrives_whole()
    {
        byte[] payload = RandomNumberGenerator.GetBytes(200_000);
        await using TestServer host = await StartServerAsync(async context => await context.Response.WriteAsync(payload));
        using Http2Client client = Http2Client.Connect(host);

        // The client's windows stay at 65,535 bytes: the server may send no more until the client opens them.
        await client.StartAsync(openWindow: false);
        await client.WriteHeadersAsync(1, Http2Client.Request(), endStream: true);
        var received = new List<byte>();
        bool ended = false;
        while (!ended)
        {
            Frame frame = await client.ReadUntilAsync(f => f.StreamId == 1);
            if (frame.Type == Http2FrameType.Data)
            {
                received.AddRange(frame.Payload);
                received.Count.ShouldBeLessThanOrEqualTo(65_535 + (received.Count / 65_535 * 65_535));
                ended = frame.HasFlag(Http2FrameFlags.EndStream);
                if (frame.Payload.Length > 0)
                {
                    await client.WriteWindowUpdateAsync(0, frame.Payload.Length);
                    await client.WriteWindowUpdateAsync(1, frame.Payload.Length);
                }
            }
            else
            {
                ended = frame.HasFlag(Http2FrameFlags.EndStream);
            }
        }

        received.ToArray().ShouldBe(payload);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Headers_of_an_app_header_set_land_in_its_typed_properties_over_HTTP_2()
    {
        string? tenant = null;
        await using TestServer host = await StartServerAsync<HeaderSet>(context =>
        {
            tenant = context.Request.Headers.XTenantId.ToString();
            context.Response.Headers.XServedBy = "edge-2";
            return default;
        });
        using Http2Client client = Http2Client.Connect(host);
        await client.StartAsync();

        await client.WriteHeadersAsync(1, Http2Client.Request(fields: [("x-tenant-id", "green")]), endStream: true);
        Http2Response response = await client.ReadResponseAsync(1);

        tenant.ShouldBe("green");
        response.Headers["x-served-by"].ShouldBe("edge-2");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_stopping_server_sends_GOAWAY_lets_the_open_stream_finish_then_closes()
    {
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            started.SetResult();
            await release.Task;
            context.Response.Write("finished"u8);
        });
        await using TestServer _ = host;
        using Http2Client __ = client;
        await client.WriteHeadersAsync(1, Http2Client.Request(), endStream: true);
        await started.Task.WaitAsync(TestTimeouts.Operation);

        Task stopping = host.Server.StopAsync();
        (Http2ErrorCode code, int lastStreamId) = await client.ReadGoAwayAsync();
        code.ShouldBe(Http2ErrorCode.NoError);
        lastStreamId.ShouldBe(1);
        stopping.IsCompleted.ShouldBeFalse();

        release.SetResult();
        (await client.ReadResponseAsync(1)).BodyText.ShouldBe("finished");
        (await client.IsClosedAsync()).ShouldBeTrue();
        await stopping.WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_idle_connection_gets_GOAWAY_when_the_server_stops()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ => default);
        await using TestServer _ = host;
        using Http2Client __ = client;
        await client.WriteHeadersAsync(1, Http2Client.Request(), endStream: true);
        await client.ReadResponseAsync(1);

        Task stopping = host.Server.StopAsync();

        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.NoError);
        (await client.IsClosedAsync()).ShouldBeTrue();
        await stopping.WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Through_the_drain_delay_a_connection_takes_new_streams_and_gets_GOAWAY_only_when_the_drain_ends()
    {
        int draining = 0;
        (TestServer host, Http2Client client) = await StartWithClientAsync(context =>
        {
            context.Response.Write("served"u8);
            return default;
        }, options =>
        {
            options.DrainDelay = TimeSpan.FromSeconds(1);
            options.Draining = () => Interlocked.Increment(ref draining);
        });
        await using TestServer _ = host;
        using Http2Client __ = client;
        await client.WriteHeadersAsync(1, Http2Client.Request(), endStream: true);
        (await client.ReadResponseAsync(1)).BodyText.ShouldBe("served");

        Task stopping = host.Server.StopAsync();
        host.Server.IsReady.ShouldBeFalse();
        draining.ShouldBe(1);

        // Load balancers are still being told: the connection serves as before.
        await client.WriteHeadersAsync(3, Http2Client.Request(), endStream: true);
        (await client.ReadResponseAsync(3)).BodyText.ShouldBe("served");
        stopping.IsCompleted.ShouldBeFalse();

        // Then GOAWAY names the last stream taken up, and the idle connection closes.
        (Http2ErrorCode code, int lastStreamId) = await client.ReadGoAwayAsync();
        code.ShouldBe(Http2ErrorCode.NoError);
        lastStreamId.ShouldBe(3);
        (await client.IsClosedAsync()).ShouldBeTrue();
        await stopping.WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_idle_connection_gets_GOAWAY_at_once_when_the_drain_begins_without_the_HTTP_1_1_drain_idle_timeout()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ => default,
            options => options.DrainIdleTimeout = TimeSpan.FromSeconds(30));
        await using TestServer _ = host;
        using Http2Client __ = client;
        await client.WriteHeadersAsync(1, Http2Client.Request(), endStream: true);
        await client.ReadResponseAsync(1);

        // GOAWAY cannot race a request (the client knows which streams were taken up): no grace is needed.
        var elapsed = System.Diagnostics.Stopwatch.StartNew();
        Task stopping = host.Server.StopAsync();
        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.NoError);
        (await client.IsClosedAsync()).ShouldBeTrue();
        await stopping.WaitAsync(TestTimeouts.Operation);
        elapsed.Elapsed.ShouldBeLessThan(TimeSpan.FromSeconds(15));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_stream_that_outlives_the_shutdown_timeout_is_aborted_after_GOAWAY_and_the_stop_completes()
    {
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var aborted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            started.SetResult();
            try
            {
                await Task.Delay(Timeout.InfiniteTimeSpan, context.RequestAborted);
            }
            catch (OperationCanceledException)
            {
                aborted.SetResult();
            }
        }, options => options.ShutdownTimeout = TimeSpan.FromMilliseconds(300));
        await using TestServer _ = host;
        using Http2Client __ = client;
        await client.WriteHeadersAsync(1, Http2Client.Request(), endStream: true);
        await started.Task.WaitAsync(TestTimeouts.Operation);

        Task stopping = host.Server.StopAsync();
        (Http2ErrorCode code, int lastStreamId) = await client.ReadGoAwayAsync();
        code.ShouldBe(Http2ErrorCode.NoError);
        lastStreamId.ShouldBe(1);

        await stopping.WaitAsync(TestTimeouts.Operation);
        await aborted.Task.WaitAsync(TestTimeouts.Operation);
        (await client.IsClosedAsync()).ShouldBeTrue();
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class Http2ExchangeTestsOnLibuv : Http2ExchangeTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests over TLS (h2 chosen with ALPN) on the sockets transport.</summary>
public sealed class Http2ExchangeTestsOverTls : Http2ExchangeTests
{
    protected override bool Https => true;
}

/// <summary>The same tests over TLS on the libuv transport.</summary>
public sealed class Http2ExchangeTestsOverTlsOnLibuv : Http2ExchangeTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}
