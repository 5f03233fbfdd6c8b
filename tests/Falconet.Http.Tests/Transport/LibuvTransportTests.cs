using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Falconet.Transport.Libuv;
using Shouldly;

namespace Falconet.Http.Tests.Transport;

/// <summary>The loop transport tests on libuv, and what only libuv promises: both ways to spread connections, its errors.</summary>
public sealed class LibuvTransportTests : LoopTransportTests
{
    protected override TransportKind Transport => TransportKind.Libuv;

    protected override string LoopThreadPrefix => "falconet-uv-";

    protected override ITransportFactory CreateTransport(int loops, IoScheduling? scheduling)
        => CreateTransport(new LibuvTransportOptions { LoopCount = loops, Scheduling = scheduling ?? IoScheduling.IoThreads });

    protected override IReadOnlyList<long> AcceptedPerLoop(ITransportFactory transport) => ((LibuvTransportFactory)transport).AcceptedPerLoop;

    protected override int LoopsRunning(ITransportFactory transport) => ((LibuvTransportFactory)transport).LoopsRunning;

    private static LibuvTransportFactory CreateTransport(LibuvTransportOptions options)
    {
        options.TrackLeaks = true;
        return new LibuvTransportFactory(options);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Connections_handed_off_by_loop_0_spread_evenly_over_the_loops()
    {
        var threads = new ConcurrentDictionary<string, int>();
        await using TestServer host = await StartAsync(context =>
        {
            threads.AddOrUpdate(Thread.CurrentThread.Name ?? "?", 1, (_, n) => n + 1);
            return Hello(context);
        }, configure: options => options.TransportFactory = CreateTransport(new LibuvTransportOptions { LoopCount = 2, Distribution = LibuvDistribution.Handoff }));

        for (int i = 0; i < 32; i++)
        {
            using RawClient client = host.Connect();
            await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("hello");
        }

        AcceptedPerLoop(host.Server.Options.TransportFactory!).ShouldBe(new long[] { 16, 16 });
        threads.Keys.Order().ShouldBe(new[] { "falconet-uv-0", "falconet-uv-1" });
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_handler_blocking_its_loop_does_not_stop_the_other_loops()
    {
        using var release = new ManualResetEventSlim();
        var slowEntered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartAsync(context =>
        {
            if (context.Request.PathBytes.SequenceEqual("/slow"u8))
            {
                slowEntered.TrySetResult();

                // Blocks its loop on purpose: only that loop's connections may stall.
                release.Wait(TestTimeouts.Operation);
            }

            return Hello(context);
        }, configure: options => options.TransportFactory = CreateTransport(new LibuvTransportOptions { LoopCount = 2, Distribution = LibuvDistribution.Handoff }));
        try
        {
            // Hand-off is round robin from loop 0, which also accepts: the first connection goes to loop 0, the second
            // to loop 1 (blocked below), the third to loop 0 again.
            using RawClient first = host.Connect();
            await first.SendAsync("GET /fast HTTP/1.1\r\nHost: test\r\n\r\n");
            (await first.ReadResponseAsync()).BodyText.ShouldBe("hello");

            using RawClient slow = host.Connect();
            await slow.SendAsync("GET /slow HTTP/1.1\r\nHost: test\r\n\r\n");
            await slowEntered.Task.WaitAsync(TestTimeouts.Operation);

            using RawClient third = host.Connect();
            await third.SendAsync("GET /fast HTTP/1.1\r\nHost: test\r\n\r\n");
            (await third.ReadResponseAsync().WaitAsync(TestTimeouts.Operation)).BodyText.ShouldBe("hello");
            await first.SendAsync("GET /fast HTTP/1.1\r\nHost: test\r\n\r\n");
            (await first.ReadResponseAsync().WaitAsync(TestTimeouts.Operation)).BodyText.ShouldBe("hello");

            release.Set();
            (await slow.ReadResponseAsync()).BodyText.ShouldBe("hello");
        }
        finally
        {
            release.Set();
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_port_in_use_is_an_error_with_libuvs_name_for_it()
    {
        using var taken = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        taken.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        taken.Listen();
        var options = new FalconetServerOptions { Transport = TransportKind.Libuv, IoThreadCount = 2 };
        options.Endpoints.Add((IPEndPoint)taken.LocalEndPoint!);
        await using var server = new FalconetServer(options, Hello);

        LibuvException error = await Should.ThrowAsync<LibuvException>(() => server.StartAsync());
        error.ErrorName.ShouldBe("EADDRINUSE");

        // libuv reports a bind conflict from uv_tcp_bind or, deferred, from uv_listen; the message names the call either way.
        error.Call.ShouldBeOneOf("uv_tcp_bind", "uv_listen");
        error.Message.ShouldStartWith(error.Call + " failed: EADDRINUSE (address already in use)");
    }
}
