using System;
using System.Linq;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>
/// The minimum request-body and response data rates, on a manual clock: real clients send or read slowly relative to
/// it, and the server's heartbeat closes those below the rate.
/// </summary>
public class DataRateTests : ServerTests
{
    private const int ClosedByServerEvent = 40;
    private const int ApplicationErrorEvent = 2;
    private static readonly TimeSpan Step = TimeSpan.FromSeconds(1);

    private Task<TestServer> StartAsync(ManualTimeProvider clock, RecordingLoggerFactory logs, Func<HttpContext, ValueTask> handler,
        MinDataRate? body = null, MinDataRate? response = null) =>
        StartServerAsync(handler, options =>
        {
            options.TimeProvider = clock;
            options.HeartbeatInterval = Step;
            options.LoggerFactory = logs;
            options.MinRequestBodyDataRate = body;
            options.MinResponseDataRate = response;
        });

    /// <summary>Sends a request with a 1 MB body, then 10 of its bytes per second of the clock until the response comes.</summary>
    private static async Task<RawResponse> TrickleBodyAsync(RawClient client, ManualTimeProvider clock)
    {
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 1000000\r\n\r\n");
        Task<RawResponse> response = client.ReadResponseAsync();
        for (int i = 0; i < 60 && !response.IsCompleted; i++)
        {
            try
            {
                await client.SendAsync(new byte[10]);
            }
            catch (SocketException)
            {
                // The server answered and closed before this loop saw the answer (its lingering close ends on the same
                // clock): the answer is read below.
                break;
            }

            await Task.Delay(20);
            clock.Advance(Step);
            await Task.WhenAny(response, Task.Delay(20));
        }

        return await response.WaitAsync(TestTimeouts.Operation);
    }

    private static bool ClosedFor(RecordingLoggerFactory logs, string reason) =>
        logs.Entries.Any(e => e.EventId == ClosedByServerEvent && e.Message.EndsWith($"({reason})", StringComparison.Ordinal));

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_body_that_arrives_below_the_minimum_rate_is_answered_408_and_the_connection_closes()
    {
        var clock = new ManualTimeProvider();
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartAsync(clock, logs, BodyHashing.EchoHashWithReader, body: new MinDataRate(100, TimeSpan.FromSeconds(2)));
        using RawClient client = host.Connect();

        // 10 bytes a second, far below 100 B/s.
        RawResponse tooSlow = await TrickleBodyAsync(client, clock);
        tooSlow.StatusCode.ShouldBe(408);
        tooSlow.Header("Connection").ShouldBe("close");
        clock.Elapsed.ShouldBeGreaterThan(TimeSpan.FromSeconds(2));

        (await clock.AdvanceUntilAsync(() => host.Server.ConnectionCount == 0, Step)).ShouldBeTrue();
        ClosedFor(logs, "min_request_body_data_rate").ShouldBeTrue();
        logs.Entries.ShouldContain(entry => entry.EventId == RecordingLoggerFactory.BadRequest
            && entry.Message.Contains($"({RequestRejections.GetName(RequestRejectionReason.RequestBodyTooSlow)})", StringComparison.Ordinal));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task With_the_defaults_a_body_trickled_at_10_bytes_a_second_is_answered_408_once_the_5_s_grace_has_passed()
    {
        var clock = new ManualTimeProvider();
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithReader, options =>
        {
            options.TimeProvider = clock;
            options.HeartbeatInterval = Step;
            options.LoggerFactory = logs;
        });
        using RawClient client = host.Connect();

        (await TrickleBodyAsync(client, clock)).StatusCode.ShouldBe(408);
        clock.Elapsed.ShouldBeGreaterThan(TimeSpan.FromSeconds(5));
        clock.Elapsed.ShouldBeLessThan(TimeSpan.FromSeconds(10));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_body_that_keeps_above_the_minimum_rate_arrives_whole()
    {
        var clock = new ManualTimeProvider();
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartAsync(clock, logs, BodyHashing.EchoHashWithReader, body: new MinDataRate(100, TimeSpan.FromSeconds(2)));
        using RawClient client = host.Connect();
        byte[] body = BodyHashing.RandomBytes(6_000, seed: 3);
        await client.SendAsync($"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: {body.Length}\r\n\r\n");

        // 300 bytes a second for 20 seconds: three times the rate.
        for (int offset = 0; offset < body.Length; offset += 300)
        {
            await client.SendAsync(body.AsMemory(offset, 300));
            await Task.Delay(20);
            clock.Advance(Step);
        }

        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe($"{body.Length} {BodyHashing.Sha256Hex(body)}");
        ClosedFor(logs, "min_request_body_data_rate").ShouldBeFalse();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Time_a_handler_takes_before_reading_on_is_not_held_against_the_client()
    {
        var clock = new ManualTimeProvider();
        var logs = new RecordingLoggerFactory();
        var paused = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var resume = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartAsync(clock, logs, async context =>
        {
            byte[] buffer = new byte[2_000];
            int read = 0;
            while (read < 1_000)
            {
                read += await context.Request.BodyReader.ReadAsync(buffer.AsMemory(read, 1_000 - read));
            }

            paused.TrySetResult();
            await resume.Task;
            int more;
            while ((more = await context.Request.BodyReader.ReadAsync(buffer.AsMemory(read))) > 0)
            {
                read += more;
            }

            context.Response.Write(Encoding.ASCII.GetBytes(read.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        }, body: new MinDataRate(100, TimeSpan.FromSeconds(2)));
        using RawClient client = host.Connect();
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 2000\r\n\r\n");
        await client.SendAsync(new byte[1_000]);
        await paused.Task.WaitAsync(TestTimeouts.Operation);

        // A minute in the handler with no read pending: the client is not waited on.
        for (int i = 0; i < 60; i++)
        {
            clock.Advance(Step);
        }

        await Task.Delay(50);
        resume.TrySetResult();
        await client.SendAsync(new byte[1_000]);

        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe("2000");
        ClosedFor(logs, "min_request_body_data_rate").ShouldBeFalse();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_stops_reading_a_large_response_is_reset_and_the_handler_is_not_blamed()
    {
        var clock = new ManualTimeProvider();
        var logs = new RecordingLoggerFactory();
        var handlerFailed = new TaskCompletionSource<Exception>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartAsync(clock, logs, async context =>
        {
            byte[] piece = new byte[16 * 1024];
            try
            {
                for (int i = 0; i < 1024; i++)
                {
                    await context.Response.WriteAsync(piece);
                }
            }
            catch (Exception exception)
            {
                handlerFailed.TrySetResult(exception);
                throw;
            }
        }, response: new MinDataRate(1_000, TimeSpan.FromSeconds(2)));
        using RawClient client = host.Connect(receiveBufferSize: 4096);
        await client.SendAsync("GET /large HTTP/1.1\r\nHost: test\r\n\r\n");

        // The client never reads: the server's sends stall once the socket buffers are full.
        (await clock.AdvanceUntilAsync(() => handlerFailed.Task.IsCompleted && host.Server.ConnectionCount == 0, TimeSpan.FromSeconds(5))).ShouldBeTrue();

        (await handlerFailed.Task.WaitAsync(TestTimeouts.Operation)).ShouldBeAssignableTo<System.IO.IOException>();
        ClosedFor(logs, "min_response_data_rate").ShouldBeTrue();
        logs.Contains(ApplicationErrorEvent).ShouldBeFalse();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_pipelines_requests_and_never_reads_the_answers_is_reset()
    {
        var clock = new ManualTimeProvider();
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartAsync(clock, logs, context =>
        {
            context.Response.Write(new byte[16 * 1024]);
            return default;
        }, response: new MinDataRate(1_000, TimeSpan.FromSeconds(2)));
        using RawClient client = host.Connect(receiveBufferSize: 4096);
        var batch = new StringBuilder();
        for (int i = 0; i < 1_000; i++)
        {
            batch.Append("GET /r HTTP/1.1\r\nHost: test\r\n\r\n");
        }

        // Sent without waiting for it to be taken: the server stops reading once its sends stall.
        _ = client.SendAsync(batch.ToString());
        for (int i = 0; i < 1_000 && host.Server.RequestCount == 0; i++)
        {
            await Task.Delay(10);
        }

        (await clock.AdvanceUntilAsync(() => host.Server.ConnectionCount == 0, TimeSpan.FromSeconds(5))).ShouldBeTrue();

        ClosedFor(logs, "min_response_data_rate").ShouldBeTrue();
        host.Server.RequestCount.ShouldBeLessThan(1_000);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class DataRateTestsOnLibuv : DataRateTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class DataRateTestsOnIoUring : DataRateTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
