using System;
using System.Buffers;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Transport;
using Falconet.Transport.IoUring;
using Shouldly;

namespace Falconet.Runtime.Tests.Transport;

/// <summary>What only the io_uring transport promises: loops that own their ring, connections and pool, staged sends, its stop.</summary>
public sealed class IoUringTransportTests
{
    private const int Timeout = 30_000;
    private static readonly TimeSpan Step = TransportHarness.StepTimeout;

    [Fact(Timeout = Timeout)]
    public async Task Accepted_connections_inherit_TCP_NODELAY_from_the_listening_socket()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring);
        (_, TransportConnection server) = await harness.ConnectAsync();

        ((IoUringConnection)server).IsNoDelay.ShouldBeTrue();
    }

    [Fact(Timeout = Timeout)]
    public async Task Each_loop_owns_a_ring_and_a_pool_and_a_pending_receive_resumes_on_the_loop_that_owns_the_connection()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 2);
        harness.Factory.Pools.Count.ShouldBe(2);
        harness.Factory.Pools[1].OwnerThreadId.ShouldNotBe(harness.Factory.Pools[0].OwnerThreadId);
        var factory = (IoUringTransportFactory)harness.Factory;
        factory.Loops.ShouldAllBe(loop => (loop.RingFlags & IoUringSupport.RequiredFlags) == IoUringSupport.RequiredFlags);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();

        Thread resumedOn = await TransportHarness.ThreadAPendingReceiveResumesOnAsync(client, server);

        resumedOn.ManagedThreadId.ShouldBe(server.Pool.OwnerThreadId);
        server.CompletesOnThreadPool.ShouldBeFalse();
    }

    [Fact(Timeout = Timeout)]
    public async Task Schedule_runs_work_on_the_loop_thread_that_owns_the_connection_pool()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 2);
        for (int i = 0; i < 4; i++)
        {
            (_, TransportConnection server) = await harness.ConnectAsync();
            var ran = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
            server.Schedule(new DelegateWorkItem(() => ran.SetResult(Environment.CurrentManagedThreadId)));
            (await ran.Task.WaitAsync(Step)).ShouldBe(server.Pool.OwnerThreadId);
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task With_thread_pool_scheduling_a_pending_receive_resumes_on_a_thread_pool_thread()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, scheduling: IoScheduling.ThreadPool);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();

        Thread resumedOn = await TransportHarness.ThreadAPendingReceiveResumesOnAsync(client, server);

        resumedOn.IsThreadPoolThread.ShouldBeTrue();
        server.CompletesOnThreadPool.ShouldBeTrue();
    }

    [Fact(Timeout = Timeout)]
    public async Task A_send_of_one_block_made_on_the_loop_completes_at_once_and_its_bytes_arrive()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 1);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        byte[] payload = new byte[4096];
        new Random(3).NextBytes(payload);
        var completedAtOnce = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

        // On the loop, as the HTTP layer sends: the bytes are copied and the send is done before the kernel saw them.
        server.Schedule(new DelegateWorkItem(() =>
        {
            ValueTask send = server.SendAsync(new ReadOnlySequence<byte>(payload));
            completedAtOnce.SetResult(send.IsCompletedSuccessfully);
        }));

        (await completedAtOnce.Task.WaitAsync(Step)).ShouldBeTrue();
        byte[] received = new byte[payload.Length];
        await TransportHarness.ReceiveExactlyAsync(client, received).WaitAsync(Step);
        received.ShouldBe(payload);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_graceful_close_completes_at_once_and_delivers_every_completed_send_to_a_slow_reader_before_the_FIN()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 1);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        long completed = 0;
        Task waiting = await FillUntilASendWaitsAsync(server, sent => completed = sent);
        ValueTask dispose = server.DisposeAsync();
        await Should.ThrowAsync<ConnectionAbortedException>(() => waiting.WaitAsync(Step));
        await dispose.AsTask().WaitAsync(Step);

        // Everything that completed reaches the peer, then the end of the stream.
        long received = 0;
        byte[] buffer = new byte[64 * 1024];
        int n;
        while ((n = await client.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Step)) > 0)
        {
            received += n;
        }

        received.ShouldBe(completed);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_graceful_close_resets_a_peer_that_takes_nothing_of_the_last_staged_send_for_a_whole_interval()
    {
        var factory = new IoUringTransportFactory(new IoUringTransportOptions
        {
            LoopCount = 1,
            TrackLeaks = true,
            LingeringSendCheckInterval = TimeSpan.FromMilliseconds(300),
        });
        await using TransportHarness harness = await TransportHarness.StartAsync(factory);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        client.ReceiveBufferSize = 4096;
        Task waiting = await FillUntilASendWaitsAsync(server);

        // The caller's close is done at once; the staged bytes wait for a peer that never reads, then the connection is reset.
        await server.DisposeAsync().AsTask().WaitAsync(Step);
        await Should.ThrowAsync<ConnectionAbortedException>(() => waiting.WaitAsync(Step));
        var connection = (IoUringConnection)server;
        for (int i = 0; i < 100 && factory.Loops[0].OpenConnections > 0; i++)
        {
            await Task.Delay(50);
        }

        factory.Loops[0].OpenConnections.ShouldBe(0);
        byte[] buffer = new byte[64 * 1024];
        var reset = await Should.ThrowAsync<SocketException>(async () =>
        {
            while (await client.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Step) > 0)
            {
            }
        });
        reset.SocketErrorCode.ShouldBe(SocketError.ConnectionReset);
        connection.IsNoDelay.ShouldBeFalse("the descriptor is closed");
    }

    [Fact(Timeout = Timeout)]
    public async Task Disposing_the_factory_completes_a_pending_receive_with_0_joins_the_loops_and_resets_the_connection()
    {
        var factory = new IoUringTransportFactory(new IoUringTransportOptions { LoopCount = 2, TrackLeaks = true });
        IConnectionListener listener = await factory.BindAsync(new IPEndPoint(IPAddress.Loopback, 0));
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        ValueTask<TransportConnection?> accept = listener.AcceptAsync();
        await client.ConnectAsync(listener.EndPoint).WaitAsync(Step);
        var server = (IoUringConnection)(await accept.AsTask().WaitAsync(Step))!;
        ValueTask<int> pending = server.ReceiveAsync(new byte[16]);

        factory.Dispose();

        (await pending.AsTask().WaitAsync(Step)).ShouldBe(0);
        await server.DisposeAsync().AsTask().WaitAsync(Step);
        factory.LoopsRunning.ShouldBe(0);
        factory.Loops.ShouldAllBe(loop => loop.OpenConnections == 0);
        var reset = await Should.ThrowAsync<SocketException>(() => client.ReceiveAsync(new byte[1], SocketFlags.None).WaitAsync(Step));
        reset.SocketErrorCode.ShouldBe(SocketError.ConnectionReset);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_cancelled_pending_send_throws_OperationCanceledException_and_aborts()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        client.ReceiveBufferSize = 4096;
        using var cancel = new CancellationTokenSource();
        Task pending = server.SendAsync(new ReadOnlySequence<byte>(new byte[16 * 1024 * 1024]), cancel.Token).AsTask();
        await Task.Delay(100);
        pending.IsCompleted.ShouldBeFalse("16 MiB fit in the socket buffers: the send never had to wait");

        cancel.Cancel();

        await Should.ThrowAsync<OperationCanceledException>(() => pending.WaitAsync(Step));
        (await server.ReceiveAsync(new byte[1]).AsTask().WaitAsync(Step)).ShouldBe(0);
    }

    [Fact(Timeout = Timeout)]
    public async Task With_submission_polling_connections_echo_and_the_ring_has_a_polling_thread()
    {
        var factory = new IoUringTransportFactory(new IoUringTransportOptions
        {
            LoopCount = 1,
            TrackLeaks = true,
            SubmissionPolling = true,
            SubmissionPollingIdle = TimeSpan.FromMilliseconds(10),
        });
        await using TransportHarness harness = await TransportHarness.StartAsync(factory);
        (factory.Loops[0].RingFlags & IoUringNative.SetupSqPoll).ShouldBe(IoUringNative.SetupSqPoll);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        Task echo = TransportHarness.EchoAsync(server);

        // Pauses longer than the polling thread's idle time: it sleeps in between and must be woken.
        for (int i = 0; i < 5; i++)
        {
            byte[] payload = BitConverter.GetBytes(i);
            await TransportHarness.SendAllAsync(client, payload);
            byte[] echoed = new byte[payload.Length];
            await TransportHarness.ReceiveExactlyAsync(client, echoed).WaitAsync(Step);
            echoed.ShouldBe(payload);
            await Task.Delay(50);
        }

        client.Shutdown(SocketShutdown.Send);
        await echo.WaitAsync(Step);
    }

    /// <summary>
    /// Sends blocks of 4 KiB from outside the loop until one has to wait: the ones before completed at once (staged), the
    /// last of them is still in the kernel, and the one returned waits behind it.
    /// </summary>
    private static async Task<Task> FillUntilASendWaitsAsync(TransportConnection server, Action<long>? completed = null)
    {
        long sent = 0;
        for (int i = 0; i < 10_000; i++)
        {
            byte[] block = new byte[4096];
            block.AsSpan().Fill((byte)i);
            Task send = server.SendAsync(new ReadOnlySequence<byte>(block)).AsTask();
            if (await Task.WhenAny(send, Task.Delay(200)) != send)
            {
                completed?.Invoke(sent);
                return send;
            }

            sent += block.Length;
        }

        throw new InvalidOperationException("The peer never stopped taking bytes.");
    }

    [Theory]
    [InlineData(IoUringNative.ENOSYS, "seccomp")]
    [InlineData(IoUringNative.EPERM, "EPERM")]
    [InlineData(IoUringNative.EINVAL, "Linux 6.1 or later")]
    [InlineData(IoUringNative.ENOMEM, "ulimit -l")]
    public void Each_way_io_uring_setup_fails_has_a_reason_that_says_what_to_change(int errno, string expected)
    {
        IoUringSupport.SetupFailureReason(errno, "5.10.0").ShouldContain(expected);
    }

    [Fact]
    public void The_options_refuse_what_cannot_be_honoured()
    {
        Should.Throw<ArgumentOutOfRangeException>(() => new IoUringTransportFactory(new IoUringTransportOptions { LoopCount = 0 }));
        Should.Throw<ArgumentOutOfRangeException>(() => new IoUringTransportFactory(new IoUringTransportOptions { Backlog = 0 }));
        Should.Throw<ArgumentOutOfRangeException>(() => new IoUringTransportFactory(new IoUringTransportOptions { Scheduling = (IoScheduling)7 }));
        Should.Throw<ArgumentOutOfRangeException>(() => new IoUringTransportFactory(new IoUringTransportOptions { SubmissionPollingIdle = TimeSpan.FromSeconds(-1) }));
    }
}
