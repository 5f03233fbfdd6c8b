using System;
using System.Net.Sockets;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests;

public sealed class ShutdownTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stop_lets_an_in_flight_request_finish_then_closes()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await TestServer.StartAsync(async context =>
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
    public async Task Stop_aborts_a_request_that_outlives_the_shutdown_timeout()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await TestServer.StartAsync(
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
}
