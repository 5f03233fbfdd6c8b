using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Falconet.Transport.Libuv;
using Shouldly;

namespace Falconet.Http.Tests.Transport;

/// <summary>What only the libuv transport promises: where code runs, how connections spread over loops, its errors and its stop.</summary>
public sealed class LibuvTransportTests
{
    private static ValueTask Hello(HttpContext context)
    {
        context.Response.Write("hello"u8);
        return default;
    }

    private static Task<TestServer> StartAsync(Func<HttpContext, ValueTask> handler, LibuvTransportOptions? transport = null, Action<FalconetServerOptions>? configure = null)
        => TestServer.StartAsync(handler, options =>
        {
            if (transport is null)
            {
                options.Transport = TransportKind.Libuv;
            }
            else
            {
                transport.TrackLeaks = true;
                options.TransportFactory = new LibuvTransportFactory(transport);
            }

            configure?.Invoke(options);
        });

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task By_default_handlers_run_on_the_loop_thread_that_received_the_request()
    {
        var threads = new ConcurrentQueue<string?>();
        await using TestServer host = await StartAsync(context =>
        {
            threads.Enqueue(Thread.CurrentThread.Name);
            return Hello(context);
        });

        for (int i = 0; i < 4; i++)
        {
            using RawClient client = host.Connect();
            await client.SendAsync("GET /a HTTP/1.1\r\nHost: test\r\n\r\nGET /b HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("hello");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("hello");
        }

        threads.Count.ShouldBe(8);
        threads.ShouldAllBe(name => name != null && name.StartsWith("falconet-uv-", StringComparison.Ordinal));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task With_thread_pool_scheduling_handlers_run_on_the_thread_pool()
    {
        var pooled = new ConcurrentQueue<bool>();
        await using TestServer host = await StartAsync(context =>
        {
            pooled.Enqueue(Thread.CurrentThread.IsThreadPoolThread);
            return Hello(context);
        }, configure: options => options.Scheduling = IoScheduling.ThreadPool);

        using RawClient client = host.Connect();
        for (int i = 0; i < 4; i++)
        {
            await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("hello");
        }

        pooled.Count.ShouldBe(4);
        pooled.ShouldAllBe(onPool => onPool);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_handler_that_completes_on_another_thread_has_its_response_completed_and_sent_back_on_its_loop()
    {
        var threads = new ConcurrentQueue<string>();
        await using TestServer host = await StartAsync(async context =>
        {
            threads.Enqueue("start:" + Thread.CurrentThread.Name);
            if (context.Request.PathBytes.SequenceEqual("/async"u8))
            {
                // Leaves the loop and completes on a thread-pool thread without writing: the response head and the send
                // that follow are made after the return to the loop, so they rent from the loop's pool on the owner path.
                await Task.Delay(20).ConfigureAwait(false);
                threads.Enqueue("resumed on pool:" + Thread.CurrentThread.IsThreadPoolThread);
                return;
            }

            context.Response.Write("sync"u8);
        }, new LibuvTransportOptions { LoopCount = 1 });
        SlabMemoryPool pool = host.Server.Transport!.Pools[0];

        using RawClient client = host.Connect();
        await client.SendAsync("GET /sync HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("sync");
        long offOwnerBefore = pool.BlocksRentedOffOwner;
        for (int i = 0; i < 3; i++)
        {
            await client.SendAsync("GET /async HTTP/1.1\r\nHost: test\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            response.StatusCode.ShouldBe(200);
            response.Body.Length.ShouldBe(0);
            await client.SendAsync("GET /sync HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("sync");
        }

        pool.BlocksRentedOffOwner.ShouldBe(offOwnerBefore);
        threads.Where(t => t.StartsWith("start:", StringComparison.Ordinal)).ShouldAllBe(t => t == "start:falconet-uv-0");
        threads.Count(t => t == "resumed on pool:True").ShouldBe(3);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(LibuvDistribution.ReusePort)]
    [InlineData(LibuvDistribution.Handoff)]
    public async Task Connections_spread_over_every_loop(LibuvDistribution distribution)
    {
        var transport = new LibuvTransportOptions { LoopCount = 2, Distribution = distribution };
        var threads = new ConcurrentDictionary<string, int>();
        await using TestServer host = await StartAsync(context =>
        {
            threads.AddOrUpdate(Thread.CurrentThread.Name ?? "?", 1, (_, n) => n + 1);
            return Hello(context);
        }, transport);

        var clients = new List<RawClient>();
        try
        {
            // 32 connections: with SO_REUSEPORT the kernel hashes them over both listeners (all on one: 2 in 2^31).
            for (int i = 0; i < 32; i++)
            {
                RawClient client = host.Connect();
                clients.Add(client);
                await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
                (await client.ReadResponseAsync()).BodyText.ShouldBe("hello");
            }
        }
        finally
        {
            clients.ForEach(c => c.Dispose());
        }

        var factory = (LibuvTransportFactory)host.Server.Options.TransportFactory!;
        IReadOnlyList<long> perLoop = factory.AcceptedPerLoop;
        perLoop.Sum().ShouldBe(32);
        perLoop.ShouldAllBe(count => count > 0);
        if (distribution == LibuvDistribution.Handoff)
        {
            perLoop.ShouldBe(new long[] { 16, 16 });
        }

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
        }, new LibuvTransportOptions { LoopCount = 2, Distribution = LibuvDistribution.Handoff });
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

        System.IO.IOException failure = await Should.ThrowAsync<System.IO.IOException>(() => server.StartAsync());
        failure.Message.ShouldStartWith($"Falconet cannot bind http://{taken.LocalEndPoint}: ");
        LibuvException error = failure.InnerException.ShouldBeOfType<LibuvException>();
        error.ErrorName.ShouldBe("EADDRINUSE");

        // libuv reports a bind conflict from uv_tcp_bind or, deferred, from uv_listen; the message names the call either way.
        error.Call.ShouldBeOneOf("uv_tcp_bind", "uv_listen");
        error.Message.ShouldStartWith(error.Call + " failed: EADDRINUSE (address already in use)");
    }

    [SkippableFact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task It_serves_IPv6_loopback()
    {
        Skip.IfNot(Ipv6.HasLoopback, "IPv6 or its loopback ::1 is not available on this machine");
        await using TestServer host = await StartAsync(context =>
        {
            context.Response.Write(System.Text.Encoding.ASCII.GetBytes(context.RemoteEndPoint!.ToString()!));
            return default;
        }, configure: options =>
        {
            options.Endpoints.Clear();
            options.Endpoints.Add(new IPEndPoint(IPAddress.IPv6Loopback, 0));
        });

        using RawClient client = RawClient.Connect(host.EndPoint);
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldStartWith("[::1]:");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Clients_that_reset_mid_request_and_mid_response_leave_no_block_behind()
    {
        byte[] large = RandomNumberGenerator.GetBytes(4 * 1024 * 1024);
        await using TestServer host = await StartAsync(async context =>
        {
            if (context.Request.PathBytes.SequenceEqual("/large"u8))
            {
                await context.Response.WriteAsync(large);
                return;
            }

            byte[] buffer = new byte[8192];
            while (await context.Request.BodyReader.ReadAsync(buffer) > 0)
            {
            }

            context.Response.Write("read"u8);
        });

        for (int i = 0; i < 10; i++)
        {
            using (RawClient client = RawClient.Connect(host.EndPoint, receiveBufferSize: 4096))
            {
                await client.SendAsync("GET /large HTTP/1.1\r\nHost: test\r\n\r\n");
                await client.ReadLineAsync();
                client.Socket.LingerState = new LingerOption(true, 0);
            }

            using (RawClient client = host.Connect())
            {
                await client.SendAsync("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 1000000\r\n\r\n" + new string('x', 5000));
                client.Socket.LingerState = new LingerOption(true, 0);
            }
        }

        // The server still answers, and disposing the host checks that every block came back.
        using RawClient last = host.Connect();
        await last.SendAsync("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\n\r\nabc");
        (await last.ReadResponseAsync()).BodyText.ShouldBe("read");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_slow_reader_gets_a_large_response_byte_exact_through_the_queued_write_path()
    {
        byte[] large = RandomNumberGenerator.GetBytes(8 * 1024 * 1024);
        await using TestServer host = await StartAsync(context =>
        {
            context.Response.ContentLength = large.Length;
            return context.Response.WriteAsync(large);
        });

        using RawClient client = RawClient.Connect(host.EndPoint, receiveBufferSize: 8192);
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        string? line;
        long length = 0;
        while (!string.IsNullOrEmpty(line = await client.ReadLineAsync()))
        {
            if (line.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase))
            {
                length = long.Parse(line.AsSpan(15).Trim(), System.Globalization.CultureInfo.InvariantCulture);
            }
        }

        length.ShouldBe(large.Length);
        await Task.Delay(200); // the server fills the socket buffers and must queue the rest with uv_write
        byte[] body = await client.ReadExactAsync(length);
        SHA256.HashData(body).ShouldBe(SHA256.HashData(large));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stop_closes_idle_connections_finishes_in_flight_ones_and_joins_every_loop()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var transport = new LibuvTransportFactory(new LibuvTransportOptions { LoopCount = 2, TrackLeaks = true });
        var options = new FalconetServerOptions { TransportFactory = transport, ShutdownTimeout = TimeSpan.FromSeconds(5) };
        options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, 0));
        var server = new FalconetServer(options, async context =>
        {
            if (context.Request.PathBytes.SequenceEqual("/slow"u8))
            {
                entered.TrySetResult();
                await release.Task;
            }

            context.Response.Write("done"u8);
        });
        await server.StartAsync();
        var idle = new List<RawClient>();
        for (int i = 0; i < 8; i++)
        {
            RawClient client = RawClient.Connect(server.BoundEndpoints[0]);
            await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("done");
            idle.Add(client);
        }

        using RawClient busy = RawClient.Connect(server.BoundEndpoints[0]);
        await busy.SendAsync("GET /slow HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);

        Task stop = server.StopAsync();
        foreach (RawClient client in idle)
        {
            (await client.IsClosedByServerAsync()).ShouldBeTrue();
            client.Dispose();
        }

        release.SetResult();
        (await busy.ReadResponseAsync()).BodyText.ShouldBe("done");
        await stop.WaitAsync(TestTimeouts.Operation);
        await server.WaitForAllBlocksReturnedAsync(TimeSpan.FromSeconds(5));
        await server.DisposeAsync();

        transport.Dispose();
        transport.Pools.ShouldAllBe(pool => pool.BlocksOutstanding == 0);
        transport.LoopsRunning.ShouldBe(0);
    }
}
