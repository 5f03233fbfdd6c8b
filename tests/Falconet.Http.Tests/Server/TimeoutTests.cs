using System;
using System.Net.Sockets;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>The keep-alive and request-headers timeouts, on a manual clock: a deadline passes only when the test advances it.</summary>
public class TimeoutTests : ServerTests
{
    private static readonly TimeSpan KeepAlive = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan RequestHeaders = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan Step = TimeSpan.FromSeconds(1);

    private static ValueTask Hello(HttpContext context)
    {
        context.Response.Write("hello"u8);
        return default;
    }

    private Task<TestServer> StartAsync(ManualTimeProvider clock, Func<HttpContext, ValueTask>? handler = null) =>
        StartServerAsync(handler ?? Hello, options =>
        {
            options.TimeProvider = clock;
            options.HeartbeatInterval = Step;
            options.KeepAliveTimeout = KeepAlive;
            options.RequestHeadersTimeout = RequestHeaders;
        });

    /// <summary>Advances the clock a step at a time, giving the server a moment after each, until <paramref name="done"/> completes.</summary>
    private static async Task AdvanceUntilAsync(ManualTimeProvider clock, Task done, TimeSpan? step = null)
    {
        for (int i = 0; i < 300 && !done.IsCompleted; i++)
        {
            clock.Advance(step ?? Step);
            await Task.WhenAny(done, Task.Delay(20));
        }

        await done.WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_stray_empty_line_after_a_body_leaves_the_connection_idle_so_it_gets_no_408()
    {
        var clock = new ManualTimeProvider();
        await using TestServer host = await StartAsync(clock);
        using RawClient client = host.Connect();

        // Some clients send CRLF after a request body: an empty line, not the start of the next request.
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nhi\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("hello");
        Task<int> end = client.ReceiveEndAsync();

        // Past the request-headers timeout (5 s), within the keep-alive timeout (10 s): no 408, still open.
        for (int i = 0; i < 7; i++)
        {
            clock.Advance(Step);
            await Task.Delay(20);
        }

        end.IsCompleted.ShouldBeFalse();
        await AdvanceUntilAsync(clock, end);
        (await end).ShouldBe(0);
        clock.Elapsed.ShouldBeGreaterThanOrEqualTo(KeepAlive);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Idle_connections_are_closed_gracefully_after_the_keep_alive_timeout()
    {
        var clock = new ManualTimeProvider();
        await using TestServer host = await StartAsync(clock);
        using RawClient keptAlive = host.Connect();
        await keptAlive.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await keptAlive.ReadResponseAsync()).BodyText.ShouldBe("hello");
        using RawClient silent = host.Connect();

        // A FIN reads as 0 bytes; a reset would throw.
        Task<int> keptAliveEnd = keptAlive.ReceiveEndAsync();
        Task<int> silentEnd = silent.ReceiveEndAsync();
        await AdvanceUntilAsync(clock, Task.WhenAll(keptAliveEnd, silentEnd));

        (await keptAliveEnd).ShouldBe(0);
        (await silentEnd).ShouldBe(0);
        clock.Elapsed.ShouldBeGreaterThanOrEqualTo(KeepAlive);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task After_an_asynchronous_handler_the_watching_receive_still_honours_both_timeouts()
    {
        var clock = new ManualTimeProvider();
        await using TestServer host = await StartAsync(clock, async context =>
        {
            await Task.Yield();
            context.Response.Write("later"u8);
        });

        // Idle after the response: closed gracefully after the keep-alive timeout.
        using RawClient idle = host.Connect();
        await idle.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await idle.ReadResponseAsync()).BodyText.ShouldBe("later");
        Task<int> idleEnd = idle.ReceiveEndAsync();

        // Part of a second request after the response: 408 after the request-headers timeout.
        using RawClient slow = host.Connect();
        await slow.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await slow.ReadResponseAsync()).BodyText.ShouldBe("later");
        await slow.SendAsync("GET / HTTP/1.1\r\nHo");
        Task<RawResponse> timedOut = slow.ReadResponseAsync();

        await AdvanceUntilAsync(clock, Task.WhenAll(idleEnd, timedOut));
        (await idleEnd).ShouldBe(0);
        (await timedOut).StatusCode.ShouldBe(408);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_slow_loris_request_head_is_answered_408_and_the_connection_closes()
    {
        var clock = new ManualTimeProvider();
        await using TestServer host = await StartAsync(clock);
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\nX-Slow: ");
        Task<RawResponse> response = client.ReadResponseAsync();

        // One byte a second, each gap far below the keep-alive timeout: the head deadline counts from the first
        // byte and is not pushed back. The deadline is at least 5 s away, so these sends all precede it.
        TimeSpan trickle = RequestHeaders;
        for (TimeSpan sent = TimeSpan.Zero; sent < trickle; sent += Step)
        {
            await client.SendAsync("a");
            clock.Advance(Step);
            await Task.WhenAny(response, Task.Delay(20));
        }

        await AdvanceUntilAsync(clock, response);

        RawResponse timedOut = await response;
        timedOut.StatusCode.ShouldBe(408);
        timedOut.Header("Connection").ShouldBe("close");
        timedOut.Header("Content-Length").ShouldBe("0");

        // The close follows the linger time (see the lingering-close test below).
        Task<bool> closed = client.IsClosedByServerAsync();
        await AdvanceUntilAsync(clock, closed);
        (await closed).ShouldBeTrue();
        clock.Elapsed.ShouldBeGreaterThanOrEqualTo(RequestHeaders);
        host.Server.RequestCount.ShouldBe(0);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_408_closes_with_a_lingering_close_so_a_client_still_sending_gets_no_reset()
    {
        var clock = new ManualTimeProvider();
        await using TestServer host = await StartAsync(clock);
        using RawClient client = host.Connect();
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Le");
        Task<RawResponse> response = client.ReadResponseAsync();

        // Small steps: the linger time runs on this clock from the 408 on, and a client slow to read the 408 (TLS on a loaded
        // machine) must not see the clock pass it before the sends below.
        await AdvanceUntilAsync(clock, response, TimeSpan.FromMilliseconds(100));
        RawResponse timedOut = await response;
        timedOut.StatusCode.ShouldBe(408);
        timedOut.Header("Connection").ShouldBe("close");
        clock.Elapsed.ShouldBeLessThan(RequestHeaders + TimeSpan.FromSeconds(2));

        // The client had more to send and goes on for a while: the server keeps the socket open, so no reset fails a send.
        for (int i = 0; i < 8; i++)
        {
            await client.SendAsync(new byte[16 * 1024]);
            await Task.Delay(25);
        }

        host.Server.ConnectionCount.ShouldBe(1);

        // The linger time (2 s) passes: then the connection closes.
        (await clock.AdvanceUntilAsync(() => host.Server.ConnectionCount == 0, TimeSpan.FromMilliseconds(500))).ShouldBeTrue();
        clock.Elapsed.ShouldBeGreaterThanOrEqualTo(RequestHeaders + TimeSpan.FromSeconds(2));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_active_connection_and_a_long_running_handler_are_not_timed_out()
    {
        var clock = new ManualTimeProvider();
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartAsync(clock, async context =>
        {
            if (context.Request.PathBytes.SequenceEqual("/long"u8))
            {
                entered.TrySetResult();
                await release.Task;
            }

            context.Response.Write(System.Text.Encoding.ASCII.GetBytes($"connection={context.ConnectionId}"));
        });
        using RawClient client = host.Connect();
        string? connection = null;

        // Six requests, each after a pause shorter than the keep-alive timeout: 36 s in all, far past it.
        for (int i = 0; i < 6; i++)
        {
            await client.SendAsync($"GET /r{i} HTTP/1.1\r\nHost: test\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            connection ??= response.BodyText;
            response.BodyText.ShouldBe(connection);
            clock.Advance(TimeSpan.FromSeconds(6));
        }

        // No deadline runs while a handler does: 30 s pass inside this one.
        await client.SendAsync("GET /long HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);
        clock.Advance(TimeSpan.FromSeconds(30));
        release.TrySetResult();
        (await client.ReadResponseAsync()).BodyText.ShouldBe(connection);

        await client.SendAsync("GET /after HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe(connection);
        clock.Elapsed.ShouldBeGreaterThan(KeepAlive * 3);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class TimeoutTestsOnLibuv : TimeoutTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class TimeoutTestsOnIoUring : TimeoutTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
