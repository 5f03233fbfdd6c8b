using System;
using System.Buffers;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Transport;
using Shouldly;

namespace Falconet.Runtime.Tests.Transport;

/// <summary>
/// The promises of <see cref="TransportConnection"/> and <see cref="IConnectionListener"/> (docs/contracts.md), checked on
/// every built-in transport through the derived classes.
/// </summary>
public abstract class TransportContractTests
{
    private const int Timeout = 30_000;
    private static readonly TimeSpan Step = TransportHarness.StepTimeout;

    /// <summary>More blocks than one gathered system call takes (IOV_MAX is 1024 on Linux), so a send continues across calls.</summary>
    private const int MoreBlocksThanOneSystemCallTakes = 1100;

    /// <summary>The transport the class checks.</summary>
    protected abstract TransportUnderTest Transport { get; }

    private Task<TransportHarness> StartAsync(int ioThreads = 2, IPAddress? address = null, IoScheduling? scheduling = null)
        => TransportHarness.StartAsync(Transport, ioThreads, address, scheduling: scheduling);

    [Fact(Timeout = Timeout)]
    public async Task Echo_of_random_payloads_up_to_4_MiB_comes_back_byte_exact()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        Task echo = TransportHarness.EchoAsync(server);
        var random = new Random(1234);
        int[] sizes = [1, 4095, 4096, 4097, 65_537, random.Next(100_000, 1_000_000), 4 * 1024 * 1024];

        foreach (int size in sizes)
        {
            byte[] payload = new byte[size];
            random.NextBytes(payload);
            byte[] echoed = new byte[size];

            // Send and receive at once: the echo starts answering before the client has sent everything.
            Task send = TransportHarness.SendAllAsync(client, payload);
            await TransportHarness.ReceiveExactlyAsync(client, echoed).WaitAsync(Step);
            await send.WaitAsync(Step);

            SHA256.HashData(echoed).ShouldBe(SHA256.HashData(payload));
        }

        client.Shutdown(SocketShutdown.Send);
        await echo.WaitAsync(Step);
        (await client.ReceiveAsync(new byte[1], SocketFlags.None).WaitAsync(Step)).ShouldBe(0);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_wait_for_data_holds_no_block_completes_when_bytes_arrive_and_the_receive_after_it_reads_them()
    {
        await using TransportHarness harness = await StartAsync(ioThreads: 1);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        server.CanWaitForData.ShouldBeTrue();
        byte[] request = Encoding.ASCII.GetBytes("GET / HTTP/1.1\r\nHost: test\r\n\r\n");

        for (int round = 0; round < 3; round++)
        {
            // Called on the connection's own thread, as the HTTP layer calls it; nothing has been sent yet, so it waits.
            ValueTask<int> wait = await OnConnectionAsync(server, () => server.WaitForDataAsync(CancellationToken.None));
            await Task.Delay(50);
            wait.IsCompleted.ShouldBeFalse();
            server.Pool.BlocksOutstanding.ShouldBe(0);

            await client.SendAsync(request, SocketFlags.None);
            (await wait.AsTask().WaitAsync(Step)).ShouldBe(0);

            MemoryBlock block = server.Pool.Rent();
            ValueTask<int> receive = await OnConnectionAsync(server, () => server.ReceiveAsync(block.WritableMemory));
            int received = await receive.AsTask().WaitAsync(Step);
            block.Writable.Slice(0, received).ToArray().ShouldBe(request);
            server.Pool.Return(block);
        }

        // The peer's end completes a wait too; the receive after it tells that it was the end.
        client.Shutdown(SocketShutdown.Send);
        ValueTask<int> last = await OnConnectionAsync(server, () => server.WaitForDataAsync(CancellationToken.None));
        (await last.AsTask().WaitAsync(Step)).ShouldBe(0);
        MemoryBlock after = server.Pool.Rent();
        ValueTask<int> end = await OnConnectionAsync(server, () => server.ReceiveAsync(after.WritableMemory));
        (await end.AsTask().WaitAsync(Step)).ShouldBe(0);
        server.Pool.Return(after);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_pending_wait_for_data_completes_when_receiving_stops()
    {
        await using TransportHarness harness = await StartAsync(ioThreads: 1);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        ValueTask<int> wait = await OnConnectionAsync(server, () => server.WaitForDataAsync(CancellationToken.None));
        await Task.Delay(50);
        wait.IsCompleted.ShouldBeFalse();

        // As the heartbeat wakes a connection whose deadline passed: the wait ends, and so does every later receive.
        server.StopReceiving();
        (await wait.AsTask().WaitAsync(Step)).ShouldBe(0);
        MemoryBlock block = server.Pool.Rent();
        ValueTask<int> receive = await OnConnectionAsync(server, () => server.ReceiveAsync(block.WritableMemory));
        (await receive.AsTask().WaitAsync(Step)).ShouldBe(0);
        server.Pool.Return(block);
        client.Dispose();
    }

    /// <summary>Starts an operation where the connection runs (its loop, or the thread pool) and returns it unawaited.</summary>
    private static Task<ValueTask<int>> OnConnectionAsync(TransportConnection connection, Func<ValueTask<int>> start)
    {
        var started = new TaskCompletionSource<ValueTask<int>>(TaskCreationOptions.RunContinuationsAsynchronously);
        connection.Schedule(new StartWorkItem(() => started.SetResult(start())));
        return started.Task;
    }

    private sealed class StartWorkItem(Action action) : IThreadPoolWorkItem
    {
        public void Execute() => action();
    }

    [Fact(Timeout = Timeout)]
    public async Task SendAsync_of_many_blocks_of_uneven_sizes_delivers_every_byte_in_order()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        using var chain = new BlockChain(server.Pool);
        var random = new Random(42);
        var expected = new List<byte>();

        // More blocks than one gathered call takes, so the send also continues across calls.
        for (int i = 0; i < MoreBlocksThanOneSystemCallTakes; i++)
        {
            MemoryBlock block = server.Pool.Rent();
            int length = random.Next(1, SlabMemoryPool.BlockSize + 1);
            random.NextBytes(block.Writable.Slice(0, length));
            block.End = length;
            expected.AddRange(block.Data.ToArray());
            chain.Append(block);
        }

        byte[] received = new byte[expected.Count];
        Task receive = TransportHarness.ReceiveExactlyAsync(client, received);
        await server.SendAsync(chain.GetSequence()).AsTask().WaitAsync(Step);
        await receive.WaitAsync(Step);

        SHA256.HashData(received).ShouldBe(SHA256.HashData(expected.ToArray()));
    }

    [Fact(Timeout = Timeout)]
    public async Task SendAsync_of_a_sequence_of_plain_arrays_and_block_slices_delivers_every_byte_in_order()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        var random = new Random(7);
        var blocks = new List<MemoryBlock>();
        ArraySegmentChain? first = null;
        ArraySegmentChain? last = null;
        var expected = new List<byte>();

        // Segments that are not pool blocks (a handler's own arrays, block memory in segments of another type), more than
        // one call gathers and more than the socket buffer holds: a transport may not assume they are pinned.
        for (int i = 0; i < 40; i++)
        {
            byte[] bytes;
            if (i % 10 == 9)
            {
                bytes = new byte[random.Next(100_000, 300_000)];
                random.NextBytes(bytes);
            }
            else
            {
                MemoryBlock block = server.Pool.Rent();
                int length = random.Next(1, SlabMemoryPool.BlockSize + 1);
                random.NextBytes(block.Writable.Slice(0, length));
                block.End = length;
                blocks.Add(block);
                bytes = block.Data.ToArray();
            }

            expected.AddRange(bytes);
            var segment = new ArraySegmentChain(i % 10 == 9 ? bytes : blocks[^1].Memory.Slice(0, blocks[^1].End), last);
            first ??= segment;
            last = segment;
        }

        var sequence = new ReadOnlySequence<byte>(first!, 0, last!, last!.Memory.Length);
        byte[] received = new byte[expected.Count];
        Task send = server.SendAsync(sequence).AsTask();
        await Task.Delay(50);
        await TransportHarness.ReceiveExactlyAsync(client, received).WaitAsync(Step);
        await send.WaitAsync(Step);
        foreach (MemoryBlock block in blocks)
        {
            server.Pool.Return(block);
        }

        SHA256.HashData(received).ShouldBe(SHA256.HashData(expected.ToArray()));
    }

    /// <summary>A sequence segment over any memory, chained after the one before.</summary>
    private sealed class ArraySegmentChain : ReadOnlySequenceSegment<byte>
    {
        public ArraySegmentChain(ReadOnlyMemory<byte> memory, ArraySegmentChain? previous)
        {
            Memory = memory;
            if (previous is not null)
            {
                RunningIndex = previous.RunningIndex + previous.Memory.Length;
                previous.Next = this;
            }
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task SendAsync_of_a_sequence_starting_inside_a_block_sends_only_that_window()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        using var chain = new BlockChain(server.Pool);
        byte[] data = Enumerable.Range(0, 9_000).Select(i => (byte)i).ToArray();
        chain.Write(data);
        chain.Consume(chain.GetSequence().GetPosition(100));

        await server.SendAsync(chain.GetSequence().Slice(0, 8_000)).AsTask().WaitAsync(Step);
        byte[] received = new byte[8_000];
        await TransportHarness.ReceiveExactlyAsync(client, received).WaitAsync(Step);

        received.ShouldBe(data.AsSpan(100, 8_000).ToArray());
    }

    [Fact(Timeout = Timeout)]
    public async Task ReceiveAsync_returns_0_when_the_peer_closes_gracefully()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        await TransportHarness.SendAllAsync(client, "last words"u8.ToArray());
        client.Shutdown(SocketShutdown.Send);
        MemoryBlock block = server.Pool.Rent();
        try
        {
            int total = 0;
            int n;
            while ((n = await server.ReceiveAsync(block.Memory.Slice(total)).AsTask().WaitAsync(Step)) > 0)
            {
                total += n;
            }

            block.Memory.Slice(0, total).ToArray().ShouldBe("last words"u8.ToArray());
            (await server.ReceiveAsync(block.Memory).AsTask().WaitAsync(Step)).ShouldBe(0);
        }
        finally
        {
            server.Pool.Return(block);
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task Abort_completes_a_pending_receive_with_0_and_resets_the_peer()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        byte[] buffer = new byte[64];
        ValueTask<int> pending = server.ReceiveAsync(buffer);
        await Task.Delay(50);
        pending.IsCompleted.ShouldBeFalse();

        server.Abort();

        (await pending.AsTask().WaitAsync(Step)).ShouldBe(0);
        (await server.ReceiveAsync(buffer).AsTask().WaitAsync(Step)).ShouldBe(0);
        await Should.ThrowAsync<ConnectionAbortedException>(() => server.SendAsync(new ReadOnlySequence<byte>(buffer)).AsTask());
        var reset = await Should.ThrowAsync<SocketException>(() => client.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Step));
        reset.SocketErrorCode.ShouldBe(SocketError.ConnectionReset);
    }

    [Fact(Timeout = Timeout)]
    public async Task Abort_fails_a_send_that_waits_for_a_peer_that_does_not_read()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        client.ReceiveBufferSize = 4096;
        var big = new ReadOnlySequence<byte>(new byte[16 * 1024 * 1024]);
        Task pending = server.SendAsync(big).AsTask();
        await Task.Delay(100);
        pending.IsCompleted.ShouldBeFalse("16 MiB fit in the socket buffers: the send never had to wait");

        server.Abort();

        await Should.ThrowAsync<ConnectionAbortedException>(() => pending.WaitAsync(Step));
    }

    [Fact(Timeout = Timeout)]
    public async Task A_large_send_to_a_slow_reader_completes_while_a_receive_is_pending()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        byte[] payload = new byte[4 * 1024 * 1024];
        new Random(7).NextBytes(payload);
        byte[] inbound = new byte[16];
        ValueTask<int> receive = server.ReceiveAsync(inbound);

        Task send = server.SendAsync(new ReadOnlySequence<byte>(payload)).AsTask();
        byte[] received = new byte[payload.Length];
        int total = 0;
        while (total < received.Length)
        {
            // Small reads with pauses: the server's send goes out in many partial pieces.
            int n = await client.ReceiveAsync(received.AsMemory(total, Math.Min(64 * 1024, received.Length - total)), SocketFlags.None).AsTask().WaitAsync(Step);
            n.ShouldNotBe(0);
            total += n;
            if (total % 8 == 0)
            {
                await Task.Delay(1);
            }
        }

        await send.WaitAsync(Step);
        receive.IsCompleted.ShouldBeFalse();
        await TransportHarness.SendAllAsync(client, "ping"u8.ToArray());
        (await receive.AsTask().WaitAsync(Step)).ShouldBe(4);
        SHA256.HashData(received).ShouldBe(SHA256.HashData(payload));
    }

    [Fact(Timeout = Timeout)]
    public async Task ReceiveAsync_throws_ConnectionResetException_when_the_peer_resets()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        ValueTask<int> pending = server.ReceiveAsync(new byte[64]);

        client.LingerState = new LingerOption(true, 0);
        client.Close();

        await Should.ThrowAsync<ConnectionResetException>(() => pending.AsTask().WaitAsync(Step));
    }

    [Fact(Timeout = Timeout)]
    public async Task SendAsync_to_a_peer_that_reset_throws_an_IOException()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        client.LingerState = new LingerOption(true, 0);
        client.Close();
        var data = new ReadOnlySequence<byte>(new byte[64 * 1024]);

        var error = await Should.ThrowAsync<System.IO.IOException>(async () =>
        {
            for (int i = 0; i < 1_000; i++)
            {
                await server.SendAsync(data).AsTask().WaitAsync(Step);
            }
        });

        error.ShouldBeOfType<ConnectionResetException>();
    }

    [Fact(Timeout = Timeout)]
    public async Task DisposeAsync_closes_gracefully_so_the_peer_reads_the_data_then_0()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        await server.SendAsync(new ReadOnlySequence<byte>("bye"u8.ToArray())).AsTask().WaitAsync(Step);

        await server.DisposeAsync();

        byte[] buffer = new byte[3];
        await TransportHarness.ReceiveExactlyAsync(client, buffer).WaitAsync(Step);
        buffer.ShouldBe("bye"u8.ToArray());
        (await client.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Step)).ShouldBe(0);
        (await server.ReceiveAsync(buffer).AsTask().WaitAsync(Step)).ShouldBe(0);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_second_concurrent_receive_is_refused()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        ValueTask<int> first = server.ReceiveAsync(new byte[16]);

        Should.Throw<Exception>(() => server.ReceiveAsync(new byte[16])).ShouldBeOfType<InvalidOperationException>();

        await TransportHarness.SendAllAsync(client, "x"u8.ToArray());
        (await first.AsTask().WaitAsync(Step)).ShouldBe(1);
    }

    [Fact(Timeout = Timeout)]
    public async Task Cancelling_a_pending_receive_throws_OperationCanceledException_and_aborts()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        using var cancel = new CancellationTokenSource();
        ValueTask<int> pending = server.ReceiveAsync(new byte[16], cancel.Token);

        cancel.Cancel();

        await Should.ThrowAsync<OperationCanceledException>(() => pending.AsTask().WaitAsync(Step));
        (await server.ReceiveAsync(new byte[16]).AsTask().WaitAsync(Step)).ShouldBe(0);
    }

    [Fact(Timeout = Timeout)]
    public async Task UnbindAsync_makes_a_pending_and_every_later_AcceptAsync_return_null()
    {
        await using TransportHarness harness = await StartAsync();
        ValueTask<TransportConnection?> pending = harness.Listener.AcceptAsync();
        await Task.Delay(20);

        await harness.Listener.UnbindAsync();

        (await pending.AsTask().WaitAsync(Step)).ShouldBeNull();
        (await harness.Listener.AcceptAsync().AsTask().WaitAsync(Step)).ShouldBeNull();
        using var late = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await Should.ThrowAsync<SocketException>(() => late.ConnectAsync(harness.Listener.EndPoint).WaitAsync(Step));
    }

    // A correctness test, not a timing one: 64 connections moving about 5 MB each way can take a while on a loaded
    // machine, so the waits are wider than a single step, and still bounded.
    [Fact(Timeout = 4 * Timeout)]
    public async Task Many_concurrent_connections_echo_independently_across_all_lanes()
    {
        await using TransportHarness harness = await StartAsync(ioThreads: 2);
        const int Connections = 64;
        var pairs = new List<(Socket Client, TransportConnection Server)>();
        for (int i = 0; i < Connections; i++)
        {
            pairs.Add(await harness.ConnectAsync());
        }

        pairs.Select(p => p.Server.Pool).Distinct().Count().ShouldBe(2);
        Task[] echoes = pairs.Select(p => TransportHarness.EchoAsync(p.Server)).ToArray();
        Task[] clients = pairs.Select((p, i) => ClientAsync(p.Client, i)).ToArray();

        await Task.WhenAll(clients).WaitAsync(TimeSpan.FromMilliseconds(3 * Timeout));
        await Task.WhenAll(echoes).WaitAsync(Step);

        static async Task ClientAsync(Socket client, int seed)
        {
            var random = new Random(seed);
            for (int i = 0; i < 10; i++)
            {
                byte[] payload = new byte[random.Next(1, 16_000)];
                random.NextBytes(payload);
                byte[] echoed = new byte[payload.Length];
                Task send = TransportHarness.SendAllAsync(client, payload);
                await TransportHarness.ReceiveExactlyAsync(client, echoed);
                await send;
                echoed.ShouldBe(payload);
            }

            client.Shutdown(SocketShutdown.Send);
        }
    }

    [SkippableFact(Timeout = Timeout)]
    public async Task Listener_on_IPv6_loopback_accepts_and_echoes()
    {
        Skip.IfNot(Ipv6.HasLoopback, "IPv6 or its loopback ::1 is not available on this machine");
        await using TransportHarness harness = await StartAsync(address: IPAddress.IPv6Loopback);
        harness.Listener.EndPoint.AddressFamily.ShouldBe(AddressFamily.InterNetworkV6);
        (((IPEndPoint)harness.Listener.EndPoint).Port).ShouldNotBe(0);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        Task echo = TransportHarness.EchoAsync(server);
        byte[] echoed = new byte[5];
        await TransportHarness.SendAllAsync(client, "hello"u8.ToArray());
        await TransportHarness.ReceiveExactlyAsync(client, echoed).WaitAsync(Step);
        echoed.ShouldBe("hello"u8.ToArray());
        client.Shutdown(SocketShutdown.Send);
        await echo.WaitAsync(Step);
    }

    [Theory(Timeout = Timeout)]
    [InlineData(null)]
    [InlineData(IoScheduling.ThreadPool)]
    public async Task DisposeAsync_completes_only_after_the_continuation_of_a_pending_receive_has_run(IoScheduling? scheduling)
    {
        // The transport's default (sockets: the completing thread; libuv: the loop thread) and the thread pool.
        await using TransportHarness harness = await StartAsync(scheduling: scheduling);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        MemoryBlock block = server.Pool.Rent();
        using var continuationHeld = new ManualResetEventSlim();
        using var releaseContinuation = new ManualResetEventSlim();
        try
        {
            // The continuation holds the thread it runs on: the receive's outcome is delivered but its continuation is not over.
            Task receive = HoldAsync(server.ReceiveAsync(block.Memory));
            await TransportHarness.SendAllAsync(client, "x"u8.ToArray());
            continuationHeld.Wait(Step).ShouldBeTrue();
            server.Abort();

            ValueTask dispose = server.DisposeAsync();
            await Task.Delay(100);
            dispose.IsCompleted.ShouldBeFalse("DisposeAsync completed while the receive's continuation was still running");

            releaseContinuation.Set();
            await dispose.AsTask().WaitAsync(Step);
            await receive.WaitAsync(Step);
        }
        finally
        {
            releaseContinuation.Set();
            server.Pool.Return(block);
        }

        async Task HoldAsync(ValueTask<int> pending)
        {
            await pending.ConfigureAwait(false);
            continuationHeld.Set();
            releaseContinuation.Wait(Step);
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task A_plain_connection_carries_no_TLS_and_negotiated_no_application_protocol()
    {
        await using TransportHarness harness = await StartAsync();
        (_, TransportConnection server) = await harness.ConnectAsync();

        server.TlsInfo.ShouldBeNull();
        server.NegotiatedApplicationProtocol.ShouldBe(default);
        harness.Factory.RefusedConnections.ShouldBe(0);
    }

    [Fact(Timeout = Timeout)]
    public async Task Accepted_connections_know_both_endpoints()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();

        server.RemoteEndPoint.ShouldBe(client.LocalEndPoint);
        server.LocalEndPoint.ShouldBe(harness.Listener.EndPoint);
    }

    [Fact(Timeout = Timeout)]
    public async Task StopReceiving_completes_a_pending_receive_with_0_and_leaves_sending_and_a_graceful_close()
    {
        await using TransportHarness harness = await StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        byte[] buffer = new byte[64];
        ValueTask<int> pending = server.ReceiveAsync(buffer);
        pending.IsCompleted.ShouldBeFalse();

        server.StopReceiving();

        (await pending.AsTask().WaitAsync(Step)).ShouldBe(0);
        (await server.ReceiveAsync(buffer).AsTask().WaitAsync(Step)).ShouldBe(0);
        await server.SendAsync(new ReadOnlySequence<byte>("408"u8.ToArray())).AsTask().WaitAsync(Step);
        await server.DisposeAsync();

        byte[] received = new byte[3];
        await TransportHarness.ReceiveExactlyAsync(client, received).WaitAsync(Step);
        received.ShouldBe("408"u8.ToArray());
        (await client.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Step)).ShouldBe(0);
    }
}

public sealed class SocketTransportContractTests : TransportContractTests
{
    protected override TransportUnderTest Transport => TransportUnderTest.Sockets;
}

public sealed class LibuvTransportContractTests : TransportContractTests
{
    protected override TransportUnderTest Transport => TransportUnderTest.Libuv;
}

public sealed class IoUringTransportContractTests : TransportContractTests
{
    protected override TransportUnderTest Transport => TransportUnderTest.IoUring;
}
