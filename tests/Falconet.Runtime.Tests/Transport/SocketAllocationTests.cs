using System;
using System.Buffers;
using System.Net.Sockets;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport;
using Shouldly;
using Xunit.Abstractions;

namespace Falconet.Runtime.Tests.Transport;

/// <summary>Allocation is measured for the whole process, so these tests run alone, after the parallel ones.</summary>
[CollectionDefinition(nameof(AllocationCollection), DisableParallelization = true)]
public sealed class AllocationCollection
{
}

[Collection(nameof(AllocationCollection))]
public sealed class SocketAllocationTests
{
    private const int WarmUp = 500;
    private const int RoundTrips = 2_000;
    private const int Windows = 3;
    private const int RequestSize = 64;

    /// <summary>Average bytes per round trip tolerated for the whole process, client side included (measured: 0 to 2).</summary>
    private const double MaxBytesPerRoundTrip = 8;

    private readonly ITestOutputHelper _output;

    public SocketAllocationTests(ITestOutputHelper output) => _output = output;

    [Fact(Timeout = 60_000)]
    public Task Receive_and_single_buffer_send_round_trips_allocate_nothing_after_warm_up() =>
        MeasureAsync(gathered: false);

    [Fact(Timeout = 60_000)]
    public Task Receive_and_gathered_send_round_trips_allocate_nothing_after_warm_up() =>
        MeasureAsync(gathered: true);

    /// <summary>Above eight segments .NET's own gathered send allocates its handle and iovec arrays per call; the transport's own does not.</summary>
    [Fact(Timeout = 60_000)]
    public Task Receive_and_send_gathering_more_than_eight_blocks_allocate_nothing_after_warm_up() =>
        MeasureAsync(gathered: true, extraBlocks: ExtraBlocks);

    /// <summary>Blocks of 16 bytes each after the echoed body in the many-segment shape: 24 segments per send in all.</summary>
    private const int ExtraBlocks = 22;

    private async Task MeasureAsync(bool gathered, int extraBlocks = 0)
    {
        // Leak tracking captures a stack trace per rent: off here, where allocation is the measure.
        await using TransportHarness harness = await TransportHarness.StartAsync(ioThreads: 1, trackLeaks: false);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        Task echo = Task.Run(() => ServeAsync(server, gathered, extraBlocks));
        byte[] request = new byte[RequestSize];
        byte[] response = new byte[(gathered ? RequestSize + 16 : RequestSize) + (extraBlocks * 16)];

        long[] windows = await Task.Run(() => ClientAsync(client, request, response)).WaitAsync(TimeSpan.FromSeconds(45));
        client.Shutdown(SocketShutdown.Send);
        await echo.WaitAsync(TransportHarness.StepTimeout);

        // The test host allocates on its own threads now and then (it reports results of earlier tests while
        // this one runs), so the least of a few windows is the figure of the transport itself.
        long best = long.MaxValue;
        foreach (long window in windows)
        {
            _output.WriteLine($"gathered={gathered} extra blocks={extraBlocks}: {window} bytes over {RoundTrips} round trips = {(double)window / RoundTrips:F2} bytes per round trip");
            best = Math.Min(best, window);
        }

        double perRoundTrip = (double)best / RoundTrips;
        perRoundTrip.ShouldBeLessThanOrEqualTo(MaxBytesPerRoundTrip, $"{perRoundTrip:F2} bytes allocated per round trip in the best of {Windows} windows");
    }

    /// <summary>Measures <see cref="Windows"/> windows of <see cref="RoundTrips"/> round trips after a warm-up; one async method for the whole client, so its state machine is allocated once.</summary>
    private static async Task<long[]> ClientAsync(Socket client, byte[] request, byte[] response)
    {
        var allocated = new long[Windows];
        long before = 0;
        for (int i = 0; i < WarmUp + (Windows * RoundTrips); i++)
        {
            if (i >= WarmUp && (i - WarmUp) % RoundTrips == 0)
            {
                before = GC.GetTotalAllocatedBytes(precise: true);
            }

            int sent = 0;
            while (sent < request.Length)
            {
                sent += await client.SendAsync(request.AsMemory(sent), SocketFlags.None).ConfigureAwait(false);
            }

            int received = 0;
            while (received < response.Length)
            {
                int n = await client.ReceiveAsync(response.AsMemory(received), SocketFlags.None).ConfigureAwait(false);
                if (n == 0)
                {
                    throw new InvalidOperationException("The server closed early.");
                }

                received += n;
            }

            if (i >= WarmUp && (i - WarmUp + 1) % RoundTrips == 0)
            {
                allocated[(i - WarmUp) / RoundTrips] = GC.GetTotalAllocatedBytes(precise: true) - before;
            }
        }

        return allocated;
    }

    /// <summary>The server loop an HTTP connection would run: receive into a chain, answer (optionally header block + body block in one gathered send), consume.</summary>
    private static async Task ServeAsync(TransportConnection connection, bool gathered, int extraBlocks)
    {
        using var input = new BlockChain(connection.Pool);
        using var output = new BlockChain(connection.Pool);
        while (true)
        {
            int n = await connection.ReceiveAsync(input.GetWritableMemory()).ConfigureAwait(false);
            if (n == 0)
            {
                break;
            }

            input.Advance(n);
            if (input.Length < RequestSize)
            {
                continue;
            }

            ReadOnlySequence<byte> request = input.GetSequence().Slice(0, RequestSize);
            if (gathered)
            {
                // A 16-byte "header" in one block, the echoed body in the next: two segments, one gathered send.
                output.GetWritableMemory().Span.Slice(0, 16).Fill((byte)'h');
                output.Advance(16);
                MemoryBlock body = connection.Pool.Rent();
                request.CopyTo(body.Writable);
                body.End = (int)request.Length;
                output.Append(body);
                for (int i = 0; i < extraBlocks; i++)
                {
                    MemoryBlock extra = connection.Pool.Rent();
                    extra.Writable.Slice(0, 16).Fill((byte)'b');
                    extra.End = 16;
                    output.Append(extra);
                }
            }
            else
            {
                request.CopyTo(output.GetWritableMemory((int)request.Length).Span);
                output.Advance((int)request.Length);
            }

            input.Consume(request.End);
            ReadOnlySequence<byte> response = output.GetSequence();
            await connection.SendAsync(response).ConfigureAwait(false);
            output.Consume(response.End);
            if (gathered)
            {
                // Keep the two-block shape for the next response: drop the rewound tail too.
                output.Dispose();
            }
        }

        await connection.DisposeAsync().ConfigureAwait(false);
    }
}
