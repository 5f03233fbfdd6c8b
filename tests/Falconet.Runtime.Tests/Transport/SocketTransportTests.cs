using System;
using System.Buffers;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport;
using Falconet.Transport.Sockets;

namespace Falconet.Runtime.Tests.Transport;

public sealed class SocketTransportTests
{
    private const int Timeout = 30_000;
    private static readonly TimeSpan Step = SocketHarness.StepTimeout;

    [Fact(Timeout = Timeout)]
    public async Task Echo_of_random_payloads_up_to_4_MiB_comes_back_byte_exact()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        Task echo = SocketHarness.EchoAsync(server);
        var random = new Random(1234);
        int[] sizes = [1, 4095, 4096, 4097, 65_537, random.Next(100_000, 1_000_000), 4 * 1024 * 1024];

        foreach (int size in sizes)
        {
            byte[] payload = new byte[size];
            random.NextBytes(payload);
            byte[] echoed = new byte[size];

            // Send and receive at once: the echo starts answering before the client has sent everything.
            Task send = SocketHarness.SendAllAsync(client, payload);
            await SocketHarness.ReceiveExactlyAsync(client, echoed).WaitAsync(Step);
            await send.WaitAsync(Step);

            Assert.Equal(SHA256.HashData(payload), SHA256.HashData(echoed));
        }

        client.Shutdown(SocketShutdown.Send);
        await echo.WaitAsync(Step);
        Assert.Equal(0, await client.ReceiveAsync(new byte[1], SocketFlags.None).WaitAsync(Step));
    }

    [Fact(Timeout = Timeout)]
    public async Task SendAsync_of_many_blocks_of_uneven_sizes_delivers_every_byte_in_order()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        using var chain = new BlockChain(server.Pool);
        var random = new Random(42);
        var expected = new List<byte>();

        // More blocks than one gathered call takes, so the send also continues across calls.
        for (int i = 0; i < SocketSender.MaxSegmentsPerCall + 88; i++)
        {
            MemoryBlock block = server.Pool.Rent();
            int length = random.Next(1, SlabMemoryPool.BlockSize + 1);
            random.NextBytes(block.Writable.Slice(0, length));
            block.End = length;
            expected.AddRange(block.Data.ToArray());
            chain.Append(block);
        }

        byte[] received = new byte[expected.Count];
        Task receive = SocketHarness.ReceiveExactlyAsync(client, received);
        await server.SendAsync(chain.GetSequence()).AsTask().WaitAsync(Step);
        await receive.WaitAsync(Step);

        Assert.Equal(SHA256.HashData(expected.ToArray()), SHA256.HashData(received));
    }

    [Fact(Timeout = Timeout)]
    public async Task SendAsync_of_a_sequence_starting_inside_a_block_sends_only_that_window()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        using var chain = new BlockChain(server.Pool);
        byte[] data = Enumerable.Range(0, 9_000).Select(i => (byte)i).ToArray();
        chain.Write(data);
        chain.Consume(chain.GetSequence().GetPosition(100));

        await server.SendAsync(chain.GetSequence().Slice(0, 8_000)).AsTask().WaitAsync(Step);
        byte[] received = new byte[8_000];
        await SocketHarness.ReceiveExactlyAsync(client, received).WaitAsync(Step);

        Assert.Equal(data.AsSpan(100, 8_000).ToArray(), received);
    }

    [Fact(Timeout = Timeout)]
    public async Task ReceiveAsync_returns_0_when_the_peer_closes_gracefully()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        await SocketHarness.SendAllAsync(client, "last words"u8.ToArray());
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

            Assert.Equal("last words"u8.ToArray(), block.Memory.Slice(0, total).ToArray());
            Assert.Equal(0, await server.ReceiveAsync(block.Memory).AsTask().WaitAsync(Step));
        }
        finally
        {
            server.Pool.Return(block);
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task Abort_completes_a_pending_receive_with_0_and_resets_the_peer()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        byte[] buffer = new byte[64];
        ValueTask<int> pending = server.ReceiveAsync(buffer);
        await Task.Delay(50);
        Assert.False(pending.IsCompleted);

        server.Abort();

        Assert.Equal(0, await pending.AsTask().WaitAsync(Step));
        Assert.Equal(0, await server.ReceiveAsync(buffer).AsTask().WaitAsync(Step));
        await Assert.ThrowsAsync<ConnectionAbortedException>(() => server.SendAsync(new ReadOnlySequence<byte>(buffer)).AsTask());
        var reset = await Assert.ThrowsAsync<SocketException>(() => client.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Step));
        Assert.Equal(SocketError.ConnectionReset, reset.SocketErrorCode);
    }

    [Fact(Timeout = Timeout)]
    public async Task Abort_fails_a_send_that_waits_for_a_peer_that_does_not_read()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        client.ReceiveBufferSize = 4096;
        var big = new ReadOnlySequence<byte>(new byte[16 * 1024 * 1024]);
        Task pending = server.SendAsync(big).AsTask();
        await Task.Delay(100);
        Assert.False(pending.IsCompleted, "16 MiB fit in the socket buffers: the send never had to wait");

        server.Abort();

        await Assert.ThrowsAsync<ConnectionAbortedException>(() => pending.WaitAsync(Step));
    }

    [Fact(Timeout = Timeout)]
    public async Task A_large_send_to_a_slow_reader_completes_while_a_receive_is_pending()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
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
            Assert.NotEqual(0, n);
            total += n;
            if (total % 8 == 0)
            {
                await Task.Delay(1);
            }
        }

        await send.WaitAsync(Step);
        Assert.False(receive.IsCompleted);
        await SocketHarness.SendAllAsync(client, "ping"u8.ToArray());
        Assert.Equal(4, await receive.AsTask().WaitAsync(Step));
        Assert.Equal(SHA256.HashData(payload), SHA256.HashData(received));
    }

    [Fact(Timeout = Timeout)]
    public async Task A_receive_pending_when_the_factory_is_disposed_still_completes()
    {
        var factory = new SocketTransportFactory(new SocketTransportOptions { IoThreadCount = 1 });
        IConnectionListener listener = await factory.BindAsync(new IPEndPoint(IPAddress.Loopback, 0));
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        ValueTask<TransportConnection?> accept = listener.AcceptAsync();
        await client.ConnectAsync(listener.EndPoint).WaitAsync(Step);
        TransportConnection server = (await accept.AsTask().WaitAsync(Step))!;
        try
        {
            ValueTask<int> pending = server.ReceiveAsync(new byte[16]);
            await listener.DisposeAsync();
            await factory.DisposeAsync();

            await SocketHarness.SendAllAsync(client, "late"u8.ToArray());

            Assert.Equal(4, await pending.AsTask().WaitAsync(Step));
        }
        finally
        {
            await server.DisposeAsync();
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task ReceiveAsync_throws_ConnectionResetException_when_the_peer_resets()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        ValueTask<int> pending = server.ReceiveAsync(new byte[64]);

        client.LingerState = new LingerOption(true, 0);
        client.Close();

        await Assert.ThrowsAsync<ConnectionResetException>(() => pending.AsTask().WaitAsync(Step));
    }

    [Fact(Timeout = Timeout)]
    public async Task SendAsync_to_a_peer_that_reset_throws_an_IOException()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        client.LingerState = new LingerOption(true, 0);
        client.Close();
        var data = new ReadOnlySequence<byte>(new byte[64 * 1024]);

        var error = await Assert.ThrowsAnyAsync<System.IO.IOException>(async () =>
        {
            for (int i = 0; i < 1_000; i++)
            {
                await server.SendAsync(data).AsTask().WaitAsync(Step);
            }
        });

        Assert.IsType<ConnectionResetException>(error);
    }

    [Fact(Timeout = Timeout)]
    public async Task DisposeAsync_closes_gracefully_so_the_peer_reads_the_data_then_0()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        await server.SendAsync(new ReadOnlySequence<byte>("bye"u8.ToArray())).AsTask().WaitAsync(Step);

        await server.DisposeAsync();

        byte[] buffer = new byte[3];
        await SocketHarness.ReceiveExactlyAsync(client, buffer).WaitAsync(Step);
        Assert.Equal("bye"u8.ToArray(), buffer);
        Assert.Equal(0, await client.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Step));
        Assert.Equal(0, await server.ReceiveAsync(buffer).AsTask().WaitAsync(Step));
    }

    [Fact(Timeout = Timeout)]
    public async Task A_second_concurrent_receive_is_refused()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        ValueTask<int> first = server.ReceiveAsync(new byte[16]);

        Assert.Throws<InvalidOperationException>(() => server.ReceiveAsync(new byte[16]));

        await SocketHarness.SendAllAsync(client, "x"u8.ToArray());
        Assert.Equal(1, await first.AsTask().WaitAsync(Step));
    }

    [Fact(Timeout = Timeout)]
    public async Task Cancelling_a_pending_receive_throws_OperationCanceledException_and_aborts()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        using var cancel = new CancellationTokenSource();
        ValueTask<int> pending = server.ReceiveAsync(new byte[16], cancel.Token);

        cancel.Cancel();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => pending.AsTask().WaitAsync(Step));
        Assert.Equal(0, await server.ReceiveAsync(new byte[16]).AsTask().WaitAsync(Step));
    }

    [Fact(Timeout = Timeout)]
    public async Task With_io_threads_pending_receives_resume_on_the_lane_thread_that_owns_the_connection_pool()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync(scheduling: IoScheduling.IoThreads);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        ValueTask<int> pending = server.ReceiveAsync(new byte[16]);
        Task<int> resumedOn = ResumeThreadAsync(pending);

        await Task.Delay(20);
        await SocketHarness.SendAllAsync(client, "x"u8.ToArray());

        Assert.Equal(server.Pool.OwnerThreadId, await resumedOn.WaitAsync(Step));

        static async Task<int> ResumeThreadAsync(ValueTask<int> receive)
        {
            await receive.ConfigureAwait(false);
            return Environment.CurrentManagedThreadId;
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task UnbindAsync_makes_a_pending_and_every_later_AcceptAsync_return_null()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        ValueTask<TransportConnection?> pending = harness.Listener.AcceptAsync();
        await Task.Delay(20);

        await harness.Listener.UnbindAsync();

        Assert.Null(await pending.AsTask().WaitAsync(Step));
        Assert.Null(await harness.Listener.AcceptAsync().AsTask().WaitAsync(Step));
        using var late = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await Assert.ThrowsAsync<SocketException>(() => late.ConnectAsync(harness.Listener.EndPoint).WaitAsync(Step));
    }

    [Fact(Timeout = Timeout)]
    public async Task Many_concurrent_connections_echo_independently_across_all_lanes()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync(ioThreads: 2);
        const int Connections = 64;
        var pairs = new List<(Socket Client, TransportConnection Server)>();
        for (int i = 0; i < Connections; i++)
        {
            pairs.Add(await harness.ConnectAsync());
        }

        Assert.Equal(2, pairs.Select(p => p.Server.Pool).Distinct().Count());
        Task[] echoes = pairs.Select(p => SocketHarness.EchoAsync(p.Server)).ToArray();
        Task[] clients = pairs.Select((p, i) => ClientAsync(p.Client, i)).ToArray();

        await Task.WhenAll(clients).WaitAsync(Step);
        await Task.WhenAll(echoes).WaitAsync(Step);

        static async Task ClientAsync(Socket client, int seed)
        {
            var random = new Random(seed);
            for (int i = 0; i < 10; i++)
            {
                byte[] payload = new byte[random.Next(1, 40_000)];
                random.NextBytes(payload);
                byte[] echoed = new byte[payload.Length];
                Task send = SocketHarness.SendAllAsync(client, payload);
                await SocketHarness.ReceiveExactlyAsync(client, echoed);
                await send;
                Assert.Equal(payload, echoed);
            }

            client.Shutdown(SocketShutdown.Send);
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task Listener_on_IPv6_loopback_accepts_and_echoes_when_the_system_has_IPv6()
    {
        if (!Socket.OSSupportsIPv6)
        {
            return;
        }

        SocketHarness harness;
        try
        {
            harness = await SocketHarness.StartAsync(address: IPAddress.IPv6Loopback);
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.AddressNotAvailable or SocketError.AddressFamilyNotSupported)
        {
            return; // IPv6 is compiled in but ::1 is not configured on this machine
        }

        await using (harness)
        {
            Assert.Equal(AddressFamily.InterNetworkV6, harness.Listener.EndPoint.AddressFamily);
            Assert.NotEqual(0, ((IPEndPoint)harness.Listener.EndPoint).Port);
            (Socket client, TransportConnection server) = await harness.ConnectAsync();
            Task echo = SocketHarness.EchoAsync(server);
            byte[] echoed = new byte[5];
            await SocketHarness.SendAllAsync(client, "hello"u8.ToArray());
            await SocketHarness.ReceiveExactlyAsync(client, echoed).WaitAsync(Step);
            Assert.Equal("hello"u8.ToArray(), echoed);
            client.Shutdown(SocketShutdown.Send);
            await echo.WaitAsync(Step);
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task Accepted_connections_have_TCP_NODELAY_and_known_endpoints()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();

        Assert.True(((SocketConnection)server).Socket.NoDelay);
        Assert.Equal(client.LocalEndPoint, server.RemoteEndPoint);
        Assert.Equal(harness.Listener.EndPoint, server.LocalEndPoint);
    }

    [Fact(Timeout = Timeout)]
    public async Task StopReceiving_completes_a_pending_receive_with_0_and_leaves_sending_and_a_graceful_close()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        byte[] buffer = new byte[64];
        ValueTask<int> pending = server.ReceiveAsync(buffer);
        Assert.False(pending.IsCompleted);

        server.StopReceiving();

        Assert.Equal(0, await pending.AsTask().WaitAsync(Step));
        Assert.Equal(0, await server.ReceiveAsync(buffer).AsTask().WaitAsync(Step));
        await server.SendAsync(new ReadOnlySequence<byte>("408"u8.ToArray())).AsTask().WaitAsync(Step);
        await server.DisposeAsync();

        byte[] received = new byte[3];
        await SocketHarness.ReceiveExactlyAsync(client, received).WaitAsync(Step);
        Assert.Equal("408"u8.ToArray(), received);
        Assert.Equal(0, await client.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Step));
    }

    [Fact(Timeout = Timeout)]
    public async Task With_io_threads_DisposeAsync_completes_only_after_a_pending_receive_has_delivered_its_outcome()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync(scheduling: IoScheduling.IoThreads);
        (_, TransportConnection server) = await harness.ConnectAsync();
        MemoryBlock block = server.Pool.Rent();
        using var laneHeld = new ManualResetEventSlim();
        using var releaseLane = new ManualResetEventSlim();
        try
        {
            Task<int> receive = ObserveAsync(server.ReceiveAsync(block.Memory));

            // Hold the lane: the receive's outcome travels through it, so it cannot be delivered meanwhile.
            server.Schedule(new DelegateWorkItem(() =>
            {
                laneHeld.Set();
                releaseLane.Wait(Step);
            }));
            Assert.True(laneHeld.Wait(Step));
            server.Abort();

            ValueTask dispose = server.DisposeAsync();
            Assert.False(dispose.IsCompleted, "DisposeAsync completed while a receive into the block was still pending");
            Assert.False(receive.IsCompleted);

            releaseLane.Set();
            await dispose.AsTask().WaitAsync(Step);
            Assert.True(receive.IsCompleted, "DisposeAsync completed before the receive's continuation ran");
            Assert.Equal(0, await receive);
        }
        finally
        {
            releaseLane.Set();
            server.Pool.Return(block);
        }

        static async Task<int> ObserveAsync(ValueTask<int> pending) => await pending.ConfigureAwait(false);
    }

    [Fact(Timeout = Timeout)]
    public async Task With_io_threads_Schedule_runs_work_on_the_lane_thread_that_owns_the_connection_pool()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync(ioThreads: 2, scheduling: IoScheduling.IoThreads);
        var threads = new List<(int Expected, Task<int> Ran)>();
        for (int i = 0; i < 4; i++)
        {
            (_, TransportConnection server) = await harness.ConnectAsync();
            var ran = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
            server.Schedule(new DelegateWorkItem(() => ran.SetResult(Environment.CurrentManagedThreadId)));
            threads.Add((server.Pool.OwnerThreadId, ran.Task));
        }

        foreach ((int expected, Task<int> ran) in threads)
        {
            Assert.Equal(expected, await ran.WaitAsync(Step));
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task On_the_thread_pool_a_pending_receive_resumes_on_the_thread_that_completed_it_with_unowned_pools()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        Assert.Equal(SlabMemoryPool.NoOwnerThread, server.Pool.OwnerThreadId);
        ValueTask<int> pending = server.ReceiveAsync(new byte[16]);
        Task<(bool PoolThread, string? Name)> resumedOn = ResumeThreadAsync(pending);

        await Task.Delay(20);
        await SocketHarness.SendAllAsync(client, "x"u8.ToArray());

        (bool poolThread, string? name) = await resumedOn.WaitAsync(Step);
        Assert.True(poolThread, "the receive resumed on " + name + ", not on a thread-pool thread");

        static async Task<(bool, string?)> ResumeThreadAsync(ValueTask<int> receive)
        {
            await receive.ConfigureAwait(false);
            return (Thread.CurrentThread.IsThreadPoolThread, Thread.CurrentThread.Name);
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task On_the_thread_pool_DisposeAsync_completes_only_after_the_continuation_of_a_pending_receive_has_run()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        MemoryBlock block = server.Pool.Rent();
        using var continuationHeld = new ManualResetEventSlim();
        using var releaseContinuation = new ManualResetEventSlim();
        try
        {
            // The continuation runs on the completing thread and holds it: the receive is still outstanding.
            Task receive = HoldAsync(server.ReceiveAsync(block.Memory));
            await SocketHarness.SendAllAsync(client, "x"u8.ToArray());
            Assert.True(continuationHeld.Wait(Step));
            server.Abort();

            ValueTask dispose = server.DisposeAsync();
            Assert.False(dispose.IsCompleted, "DisposeAsync completed while the receive's continuation was still running");

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
    public async Task On_the_thread_pool_Schedule_runs_work_on_a_thread_pool_thread()
    {
        await using SocketHarness harness = await SocketHarness.StartAsync();
        (_, TransportConnection server) = await harness.ConnectAsync();
        var ran = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

        server.Schedule(new DelegateWorkItem(() => ran.SetResult(Thread.CurrentThread.IsThreadPoolThread)));

        Assert.True(await ran.Task.WaitAsync(Step));
    }

    private sealed class DelegateWorkItem(Action action) : IThreadPoolWorkItem
    {
        public void Execute() => action();
    }
}
