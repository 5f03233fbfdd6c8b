using System;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Server;

public class ShutdownTests : ServerTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stop_lets_an_in_flight_request_finish_then_closes()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartServerAsync(async context =>
        {
            if (context.Request.PathBytes.SequenceEqual("/slow"u8))
            {
                entered.TrySetResult();
                await release.Task;
                context.Response.Write("finished"u8);
                return;
            }

            context.Response.Write("quick"u8);
        });
        using RawClient idle = host.Connect();
        await idle.SendAsync("GET /warm HTTP/1.1\r\nHost: test\r\n\r\n");
        (await idle.ReadResponseAsync()).BodyText.ShouldBe("quick");

        using RawClient busy = host.Connect();
        await busy.SendAsync("GET /slow HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);

        Task stop = host.Server.StopAsync();
        await Task.Delay(200);
        stop.IsCompleted.ShouldBeFalse();
        (await idle.IsClosedByServerAsync()).ShouldBeTrue();
        Should.Throw<SocketException>(() => RawClient.Connect(host.EndPoint).Dispose());

        release.TrySetResult();
        RawResponse response = await busy.ReadResponseAsync();
        response.BodyText.ShouldBe("finished");
        response.Header("Connection").ShouldBe("close");
        (await busy.IsClosedByServerAsync()).ShouldBeTrue();
        await stop.WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stop_answers_each_complete_request_that_arrives_meanwhile_and_closes_idle_connections_unanswered()
    {
        // Keep-alive connections, idle after a first request, each send a second one while the server stops, with no
        // grace for idle connections (so the close races the requests): a request whose bytes arrived is answered as usual
        // (with Connection: close once the drain has begun, keep-alive before), an idle connection closes without an
        // answer; no timeout has passed, so nothing may say 408.
        const int Connections = 64;
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write("hello"u8);
            return default;
        }, options => options.DrainIdleTimeout = TimeSpan.Zero);
        var clients = new RawClient[Connections];
        try
        {
            for (int i = 0; i < Connections; i++)
            {
                clients[i] = host.Connect();
                await clients[i].SendAsync("GET /first HTTP/1.1\r\nHost: test\r\n\r\n");
                (await clients[i].ReadResponseAsync()).BodyText.ShouldBe("hello");
            }

            byte[] request = "GET /during-stop HTTP/1.1\r\nHost: test\r\n\r\n"u8.ToArray();
            Task stop = host.Server.StopAsync();
            await Task.WhenAll(Array.ConvertAll(clients, client => client.SendAsync(request)));
            int answered = 0;
            for (int i = 0; i < Connections; i++)
            {
                (byte[] bytes, bool reset) = await clients[i].ReadUntilClosedAsync();
                string text = Encoding.Latin1.GetString(bytes);
                if (text.Length == 0)
                {
                    // Closed while idle: the request came too late for the connection, which the client may see as a
                    // reset since its bytes were never read.
                    continue;
                }

                text.ShouldStartWith("HTTP/1.1 200 OK\r\n", customMessage: $"connection {i}: {text}");
                text.ShouldEndWith("\r\n\r\nhello", customMessage: $"connection {i}");
                reset.ShouldBeFalse($"connection {i}: its answer must not be cut by a reset");
                answered++;
            }

            await stop.WaitAsync(TestTimeouts.Operation);
            host.Server.RequestCount.ShouldBe(Connections + answered);
        }
        finally
        {
            foreach (RawClient? client in clients)
            {
                client?.Dispose();
            }
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stop_aborts_a_request_that_outlives_the_shutdown_timeout()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartServerAsync(
            async context =>
            {
                entered.TrySetResult();
                await release.Task;
                context.Response.Write("too late"u8);
            },
            options => options.ShutdownTimeout = TimeSpan.FromMilliseconds(300));
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);

        Task stop = host.Server.StopAsync();
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        release.TrySetResult();
        await stop.WaitAsync(TestTimeouts.Operation);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Stop_closes_an_idle_keep_alive_connection_with_a_FIN_not_a_reset(bool infiniteKeepAlive)
    {
        await using TestServer host = await StartServerAsync(
            context =>
            {
                context.Response.Write("hello"u8);
                return default;
            },
            options =>
            {
                if (infiniteKeepAlive)
                {
                    options.KeepAliveTimeout = System.Threading.Timeout.InfiniteTimeSpan;
                }
            });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("hello");
        Task<int> end = client.ReceiveEndAsync();

        await host.Server.StopAsync().WaitAsync(TestTimeouts.Operation);

        // A clean end of stream reads as 0; a reset would throw ECONNRESET.
        (await end.WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stop_takes_the_shutdown_timeout_plus_the_abort_grace_when_a_handler_never_completes()
    {
        var clock = new ManualTimeProvider();
        TimeSpan shutdownTimeout = TimeSpan.FromSeconds(10);
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var never = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartServerAsync(
            async context =>
            {
                entered.TrySetResult();
                await never.Task;
            },
            options =>
            {
                options.TimeProvider = clock;
                options.ShutdownTimeout = shutdownTimeout;
            });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);

        Task stop = host.Server.StopAsync();
        await clock.WaitForOneShotTimerAsync(shutdownTimeout).WaitAsync(TestTimeouts.Operation);
        clock.Advance(shutdownTimeout);
        (await client.IsClosedByServerAsync()).ShouldBeTrue();

        // After the abort only the grace is waited for, not a second shutdown timeout.
        await clock.WaitForOneShotTimerAsync(FalconetServer.AbortGrace).WaitAsync(TestTimeouts.Operation);
        clock.Advance(FalconetServer.AbortGrace);
        await stop.WaitAsync(TestTimeouts.Operation);

        // The handler still runs: its connection and blocks stay out until it completes, then come back.
        host.Server.ConnectionCount.ShouldBe(1);
        host.Server.BlocksOutstanding.ShouldBeGreaterThan(0);
        never.TrySetResult();
        await host.Server.WaitForAllBlocksReturnedAsync(TimeSpan.FromSeconds(5));
        host.Server.ConnectionCount.ShouldBe(0);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class ShutdownTestsOnLibuv : ShutdownTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class ShutdownTestsOnIoUring : ShutdownTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
