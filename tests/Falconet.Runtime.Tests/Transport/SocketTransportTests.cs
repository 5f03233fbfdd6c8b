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
using Shouldly;

namespace Falconet.Runtime.Tests.Transport;

/// <summary>What only the sockets transport promises: I/O lanes, scheduling, its socket options.</summary>
public sealed class SocketTransportTests
{
    private const int Timeout = 30_000;
    private static readonly TimeSpan Step = TransportHarness.StepTimeout;

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

            await TransportHarness.SendAllAsync(client, "late"u8.ToArray());

            (await pending.AsTask().WaitAsync(Step)).ShouldBe(4);
        }
        finally
        {
            await server.DisposeAsync();
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task With_io_threads_pending_receives_resume_on_the_lane_thread_that_owns_the_connection_pool()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(scheduling: IoScheduling.IoThreads);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();

        Thread resumedOn = await TransportHarness.ThreadAPendingReceiveResumesOnAsync(client, server);

        resumedOn.ManagedThreadId.ShouldBe(server.Pool.OwnerThreadId);
    }

    [Fact(Timeout = Timeout)]
    public async Task Accepted_connections_have_TCP_NODELAY()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync();
        (_, TransportConnection server) = await harness.ConnectAsync();

        ((SocketConnection)server).Socket.NoDelay.ShouldBeTrue();
    }

    [Fact(Timeout = Timeout)]
    public async Task With_io_threads_DisposeAsync_completes_only_after_a_pending_receive_has_delivered_its_outcome()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(scheduling: IoScheduling.IoThreads);
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
            laneHeld.Wait(Step).ShouldBeTrue();
            server.Abort();

            ValueTask dispose = server.DisposeAsync();
            dispose.IsCompleted.ShouldBeFalse("DisposeAsync completed while a receive into the block was still pending");
            receive.IsCompleted.ShouldBeFalse();

            releaseLane.Set();
            await dispose.AsTask().WaitAsync(Step);
            receive.IsCompleted.ShouldBeTrue("DisposeAsync completed before the receive's continuation ran");
            (await receive).ShouldBe(0);
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
        await using TransportHarness harness = await TransportHarness.StartAsync(ioThreads: 2, scheduling: IoScheduling.IoThreads);
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
            (await ran.WaitAsync(Step)).ShouldBe(expected);
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task On_the_thread_pool_a_pending_receive_resumes_on_the_thread_that_completed_it_with_unowned_pools()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync();
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        server.Pool.OwnerThreadId.ShouldBe(SlabMemoryPool.NoOwnerThread);

        Thread resumedOn = await TransportHarness.ThreadAPendingReceiveResumesOnAsync(client, server);

        resumedOn.IsThreadPoolThread.ShouldBeTrue("the receive resumed on " + resumedOn.Name + ", not on a thread-pool thread");

        // It continues where the operation completed, not posted elsewhere: the TLS decorator reads as SslStream always does.
        server.CompletesOnThreadPool.ShouldBeFalse();
    }

    [Fact(Timeout = Timeout)]
    public async Task On_the_thread_pool_Schedule_runs_work_on_a_thread_pool_thread()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync();
        (_, TransportConnection server) = await harness.ConnectAsync();
        var ran = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

        server.Schedule(new DelegateWorkItem(() => ran.SetResult(Thread.CurrentThread.IsThreadPoolThread)));

        (await ran.Task.WaitAsync(Step)).ShouldBeTrue();
    }

    private sealed class DelegateWorkItem(Action action) : IThreadPoolWorkItem
    {
        public void Execute() => action();
    }
}
