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
using Shouldly;

namespace Falconet.Http.Tests.Transport;

/// <summary>
/// What the transports with event loops (libuv, io_uring) promise the server: handlers run on the loop that received the
/// request, code that left the loop comes back to it, connections spread over every loop, resets and slow readers lose
/// nothing, and a stop joins every loop. Each loop transport runs these through a derived class.
/// </summary>
public abstract class LoopTransportTests
{
    /// <summary>The transport the class checks.</summary>
    protected abstract TransportKind Transport { get; }

    /// <summary>The name of the loop threads, before their index (<c>falconet-uv-</c>).</summary>
    protected abstract string LoopThreadPrefix { get; }

    /// <summary>A transport of <paramref name="loops"/> loops with leak tracking; the default scheduling when <paramref name="scheduling"/> is null.</summary>
    protected abstract ITransportFactory CreateTransport(int loops, IoScheduling? scheduling);

    /// <summary>Connections accepted by each loop of <paramref name="transport"/>.</summary>
    protected abstract IReadOnlyList<long> AcceptedPerLoop(ITransportFactory transport);

    /// <summary>Loop threads of <paramref name="transport"/> still running.</summary>
    protected abstract int LoopsRunning(ITransportFactory transport);

    protected static ValueTask Hello(HttpContext context)
    {
        context.Response.Write("hello"u8);
        return default;
    }

    /// <summary>A server on <see cref="Transport"/>: the built-in one, or with <paramref name="loops"/> one of that many loops the test owns.</summary>
    private protected Task<TestServer> StartAsync(Func<HttpContext, ValueTask> handler, int? loops = null, Action<FalconetServerOptions>? configure = null)
        => TestServer.StartAsync(handler, options =>
        {
            if (loops is int count)
            {
                options.TransportFactory = CreateTransport(count, scheduling: null);
            }
            else
            {
                options.Transport = Transport;
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
        threads.ShouldAllBe(name => name != null && name.StartsWith(LoopThreadPrefix, StringComparison.Ordinal));
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
        }, loops: 1);
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
        threads.Where(t => t.StartsWith("start:", StringComparison.Ordinal)).ShouldAllBe(t => t == "start:" + LoopThreadPrefix + "0");
        threads.Count(t => t == "resumed on pool:True").ShouldBe(3);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Connections_spread_over_every_loop_through_their_own_listening_sockets()
    {
        var threads = new ConcurrentDictionary<string, int>();
        await using TestServer host = await StartAsync(context =>
        {
            threads.AddOrUpdate(Thread.CurrentThread.Name ?? "?", 1, (_, n) => n + 1);
            return Hello(context);
        }, loops: 2);

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

        IReadOnlyList<long> perLoop = AcceptedPerLoop(host.Server.Options.TransportFactory!);
        perLoop.Sum().ShouldBe(32);
        perLoop.ShouldAllBe(count => count > 0);
        threads.Keys.Order().ShouldBe(new[] { LoopThreadPrefix + "0", LoopThreadPrefix + "1" });
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
    public async Task A_slow_reader_gets_a_large_response_byte_exact_through_the_waiting_send_path()
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
        await Task.Delay(200); // the server fills the socket buffers and must wait for the kernel to take the rest
        byte[] body = await client.ReadExactAsync(length);
        SHA256.HashData(body).ShouldBe(SHA256.HashData(large));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stop_closes_idle_connections_finishes_in_flight_ones_and_joins_every_loop()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        ITransportFactory transport = CreateTransport(2, scheduling: null);
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

        await ((IAsyncDisposable)transport).DisposeAsync();
        transport.Pools.ShouldAllBe(pool => pool.BlocksOutstanding == 0);
        LoopsRunning(transport).ShouldBe(0);
    }
}
