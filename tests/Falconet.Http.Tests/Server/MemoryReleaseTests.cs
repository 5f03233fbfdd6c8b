using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>Slabs taken at a peak go back once the transport's pools have been idle, driven by the server's heartbeat.</summary>
public class MemoryReleaseTests : ServerTests
{
    private const int ReleasedIdleSlabsEvent = 114;
    private static readonly TimeSpan IdleTimeout = TimeSpan.FromSeconds(10);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task After_a_peak_the_idle_pools_give_their_slabs_back_and_serve_again_afterwards()
    {
        var clock = new ManualTimeProvider();
        var logs = new RecordingLoggerFactory();
        byte[] large = new byte[1024 * 1024];
        int handled = 0;
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write(large);
            Interlocked.Increment(ref handled);
            return default;
        }, options =>
        {
            options.TimeProvider = clock;
            options.HeartbeatInterval = TimeSpan.FromSeconds(1);
            options.PoolIdleTimeout = IdleTimeout;
            options.LoggerFactory = logs;
        });

        // A peak: eight connections at once, each buffering a 1 MiB response. The clients' small receive buffers and
        // their waiting to read until every response is written keep most of each response in the server's blocks, so the
        // peak does not depend on how fast the kernel drains one connection before the next is served. (A transport that
        // sends at once, as libuv and io_uring do, hands the kernel a few hundred KiB of each response before the next
        // handler runs: with 512 KiB responses the peak was once 10 slabs on io_uring.)
        RawClient[] clients = Enumerable.Range(0, 8).Select(_ => host.Connect(receiveBufferSize: 4096)).ToArray();
        try
        {
            foreach (RawClient client in clients)
            {
                await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
            }

            for (int i = 0; i < 500 && Volatile.Read(ref handled) < clients.Length; i++)
            {
                await Task.Delay(10);
            }

            Volatile.Read(ref handled).ShouldBe(clients.Length);
            await Task.WhenAll(clients.Select(async client =>
                (await client.ReadResponseAsync()).Body.Length.ShouldBe(large.Length)));
        }
        finally
        {
            foreach (RawClient client in clients)
            {
                client.Dispose();
            }
        }

        for (int i = 0; i < 500 && host.Server.ConnectionCount > 0; i++)
        {
            await Task.Delay(10);
        }

        long peak = Reserved(host);
        // At least 8 slabs (1 MiB): 18 to 95 measured across the transports, the least on io_uring.
        peak.ShouldBeGreaterThan(8L * SlabMemoryPool.SlabSize);

        // Not before the idle time.
        for (int i = 0; i < 9; i++)
        {
            clock.Advance(TimeSpan.FromSeconds(1));
        }

        Reserved(host).ShouldBe(peak);
        for (int i = 0; i < 3; i++)
        {
            clock.Advance(TimeSpan.FromSeconds(1));
        }

        // Every slab is free by now: all go (a loop's pool releases on its own thread, so give it a moment).
        for (int i = 0; i < 500 && Reserved(host) != 0; i++)
        {
            await Task.Delay(10);
        }

        Reserved(host).ShouldBe(0);
        clock.Advance(TimeSpan.FromSeconds(1));
        logs.Contains(ReleasedIdleSlabsEvent).ShouldBeTrue();

        using RawClient after = host.Connect();
        await after.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await after.ReadResponseAsync()).Body.Length.ShouldBe(large.Length);
    }

    private static long Reserved(TestServer host) => host.Server.Transport!.Pools.Sum(pool => pool.BytesReserved);
}

/// <summary>The same test on the libuv transport.</summary>
public sealed class MemoryReleaseTestsOnLibuv : MemoryReleaseTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same test on the io_uring transport.</summary>
public sealed class MemoryReleaseTestsOnIoUring : MemoryReleaseTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
