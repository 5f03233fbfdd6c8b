using System;
using System.IO;
using System.Linq;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// Switching protocols (HttpContext.UpgradeAsync) over raw sockets: the 101, the connection as an opaque stream that starts
/// with the bytes already received, requests that cannot switch, the server's stop, and the data rates after the switch.
/// </summary>
public class UpgradeTests : ServerTests
{
    private const string UpgradeRequest = "GET /echo HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n";

    /// <summary>Switches to "echo": sends back every byte until the client closes its side, then returns.</summary>
    private static async ValueTask EchoAsync(HttpContext context)
    {
        if (!context.CanUpgrade)
        {
            context.Response.Write("plain"u8);
            return;
        }

        context.Response.Headers.Upgrade = "echo";
        Stream stream = await context.UpgradeAsync();
        byte[] buffer = new byte[8192];
        int read;
        while ((read = await stream.ReadAsync(buffer)) > 0)
        {
            await stream.WriteAsync(buffer.AsMemory(0, read));
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_101_goes_out_then_the_connection_echoes_as_an_opaque_stream_starting_with_bytes_already_received()
    {
        await using TestServer host = await StartServerAsync(EchoAsync);
        using RawClient client = host.Connect();

        // The first bytes of the new protocol arrive with the request head: they belong to the stream, not to HTTP.
        await client.SendAsync(UpgradeRequest + "GET / HTTP/1.1\r\n");
        RawResponse head = await client.ReadHeadAsync();
        head.StatusLine.ShouldBe("HTTP/1.1 101 Switching Protocols");
        head.Header("Upgrade").ShouldBe("echo");
        head.Header("Connection").ShouldBe("Upgrade");
        head.Header("Content-Length").ShouldBeNull();
        head.Header("Transfer-Encoding").ShouldBeNull();
        Encoding.ASCII.GetString(await client.ReadExactAsync(16)).ShouldBe("GET / HTTP/1.1\r\n");

        byte[] large = Enumerable.Range(0, 300_000).Select(i => (byte)(i * 7)).ToArray();
        Task sending = client.SendAsync(large);
        (await client.ReadExactAsync(large.Length)).ShouldBe(large);
        await sending;

        // The client closes its side: the handler's read returns 0, it returns, and the server closes too.
        client.Socket.Shutdown(SocketShutdown.Send);
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("GET / HTTP/1.0\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")]
    [InlineData("GET / HTTP/1.1\r\nHost: test\r\nUpgrade: echo\r\n\r\n")]
    [InlineData("GET / HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\n\r\n")]
    [InlineData("POST / HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: echo\r\nContent-Length: 5\r\n\r\nhello")]
    public async Task A_request_that_cannot_switch_is_answered_as_a_plain_request(string request)
    {
        // RFC 9110 section 7.8: a server may ignore Upgrade; one with a body (which would have to be read first) is refused
        // the switch here, as Connection without "upgrade" or HTTP/1.0 are.
        await using TestServer host = await StartServerAsync(EchoAsync);
        using RawClient client = host.Connect();
        await client.SendAsync(request);
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe("plain");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Upgrading_without_an_Upgrade_response_header_fails_before_anything_is_sent()
    {
        Exception? thrown = null;
        await using TestServer host = await StartServerAsync(async context =>
        {
            thrown = await Record.ExceptionAsync(async () => await context.UpgradeAsync());
            context.Response.StatusCode = 400;
        });
        using RawClient client = host.Connect();
        await client.SendAsync(UpgradeRequest);
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(400);
        thrown.ShouldBeOfType<InvalidOperationException>().Message.ShouldContain("Upgrade response header");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_stopping_server_aborts_an_upgraded_connection_after_its_shutdown_timeout()
    {
        var upgraded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var readEnded = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        TestServer host = await StartServerAsync(async context =>
        {
            context.Response.Headers.Upgrade = "echo";
            Stream stream = await context.UpgradeAsync();
            upgraded.TrySetResult();
            try
            {
                readEnded.TrySetResult(await stream.ReadAsync(new byte[16]));
            }
            catch (IOException)
            {
                readEnded.TrySetResult(-1);
            }
        }, options => options.ShutdownTimeout = TimeSpan.FromMilliseconds(300));
        try
        {
            using RawClient client = host.Connect();
            await client.SendAsync(UpgradeRequest);
            (await client.ReadHeadAsync()).StatusCode.ShouldBe(101);
            await upgraded.Task.WaitAsync(TestTimeouts.Operation);

            // The idle upgraded connection holds the stop for the shutdown timeout, then is aborted: the handler's read ends.
            var stopping = System.Diagnostics.Stopwatch.StartNew();
            await host.Server.StopAsync().WaitAsync(TestTimeouts.Operation);
            stopping.Elapsed.ShouldBeGreaterThanOrEqualTo(TimeSpan.FromMilliseconds(250));
            (await readEnded.Task.WaitAsync(TestTimeouts.Operation)).ShouldBeLessThanOrEqualTo(0);
        }
        finally
        {
            await host.DisposeAsync();
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_upgraded_connection_may_stay_idle_far_past_every_HTTP_timeout_and_the_body_data_rate()
    {
        var clock = new ManualTimeProvider();
        await using TestServer host = await StartServerAsync(EchoAsync, options =>
        {
            options.TimeProvider = clock;
            options.HeartbeatInterval = TimeSpan.FromSeconds(1);
            options.KeepAliveTimeout = TimeSpan.FromSeconds(5);
            options.RequestHeadersTimeout = TimeSpan.FromSeconds(5);
            options.MinRequestBodyDataRate = new MinDataRate(1_000, TimeSpan.FromSeconds(1));
        });
        using RawClient client = host.Connect();
        await client.SendAsync(UpgradeRequest);
        (await client.ReadHeadAsync()).StatusCode.ShouldBe(101);
        for (int i = 0; i < 60; i++)
        {
            clock.Advance(TimeSpan.FromSeconds(1));
        }

        await Task.Delay(100);
        host.Server.ConnectionCount.ShouldBe(1);
        await client.SendAsync("still here");
        Encoding.ASCII.GetString(await client.ReadExactAsync(10)).ShouldBe("still here");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_stops_reading_an_upgraded_connection_is_held_to_the_minimum_response_data_rate()
    {
        var clock = new ManualTimeProvider();
        var writeFailed = new TaskCompletionSource<Exception>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartServerAsync(async context =>
        {
            context.Response.Headers.Upgrade = "flood";
            Stream stream = await context.UpgradeAsync();
            byte[] piece = new byte[16 * 1024];
            try
            {
                for (int i = 0; i < 4096; i++)
                {
                    await stream.WriteAsync(piece);
                }
            }
            catch (Exception exception)
            {
                writeFailed.TrySetResult(exception);
            }
        }, options =>
        {
            options.TimeProvider = clock;
            options.HeartbeatInterval = TimeSpan.FromSeconds(1);
            options.MinResponseDataRate = new MinDataRate(1_000, TimeSpan.FromSeconds(2));
        });
        using RawClient client = host.Connect(receiveBufferSize: 4096);
        await client.SendAsync(UpgradeRequest.Replace("echo", "flood", StringComparison.Ordinal));

        (await clock.AdvanceUntilAsync(() => writeFailed.Task.IsCompleted && host.Server.ConnectionCount == 0, TimeSpan.FromSeconds(5))).ShouldBeTrue();
        (await writeFailed.Task).ShouldBeAssignableTo<IOException>();
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class UpgradeTestsOnLibuv : UpgradeTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests over TLS: the upgraded stream runs inside the TLS session.</summary>
public sealed class UpgradeTestsOverTls : UpgradeTests
{
    protected override bool Https => true;
}
