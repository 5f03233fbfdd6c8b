using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Transport;
using Shouldly;

namespace Falconet.Runtime.Tests.Transport;

/// <summary>
/// What the transports with event loops (libuv, io_uring) promise beyond the contract: loop threads that own their
/// connections and pools, scheduling on the loop or the thread pool, cancellation, and a stop that resets what is left.
/// Each loop transport runs these through a derived class.
/// </summary>
public abstract class LoopTransportTests
{
    private protected const int Timeout = 30_000;
    private protected static readonly TimeSpan Step = TransportHarness.StepTimeout;

    /// <summary>The transport the class checks.</summary>
    private protected abstract TransportUnderTest Transport { get; }

    /// <summary>A factory of <paramref name="loops"/> loops with leak tracking, bound by no one yet.</summary>
    private protected abstract ITransportFactory CreateFactory(int loops);

    /// <summary>TCP_NODELAY as the accepted socket has it.</summary>
    private protected abstract bool IsNoDelay(TransportConnection connection);

    /// <summary>Loop threads still running, and connections the loops still count as open.</summary>
    private protected abstract (int LoopsRunning, int OpenConnections) LoopState(ITransportFactory factory);

    [Fact(Timeout = Timeout)]
    public async Task Accepted_connections_have_TCP_NODELAY()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(Transport);
        (_, TransportConnection server) = await harness.ConnectAsync();

        IsNoDelay(server).ShouldBeTrue();
    }

    [Fact(Timeout = Timeout)]
    public async Task Each_loop_owns_a_pool_and_a_pending_receive_resumes_on_the_loop_that_owns_the_connection()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(Transport, ioThreads: 2);
        harness.Factory.Pools.Count.ShouldBe(2);
        harness.Factory.Pools[1].OwnerThreadId.ShouldNotBe(harness.Factory.Pools[0].OwnerThreadId);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();

        Thread resumedOn = await TransportHarness.ThreadAPendingReceiveResumesOnAsync(client, server);

        resumedOn.ManagedThreadId.ShouldBe(server.Pool.OwnerThreadId);
        server.CompletesOnThreadPool.ShouldBeFalse();
    }

    [Fact(Timeout = Timeout)]
    public async Task Schedule_runs_work_on_the_loop_thread_that_owns_the_connection_pool()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(Transport, ioThreads: 2);
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
        await using TransportHarness harness = await TransportHarness.StartAsync(Transport, scheduling: IoScheduling.ThreadPool);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();

        Thread resumedOn = await TransportHarness.ThreadAPendingReceiveResumesOnAsync(client, server);

        resumedOn.IsThreadPoolThread.ShouldBeTrue();
        server.CompletesOnThreadPool.ShouldBeTrue();
    }

    [Fact(Timeout = Timeout)]
    public async Task Disposing_the_factory_completes_a_pending_receive_with_0_joins_the_loops_and_resets_the_connection()
    {
        ITransportFactory factory = CreateFactory(loops: 2);
        IConnectionListener listener = await factory.BindAsync(new IPEndPoint(IPAddress.Loopback, 0));
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        ValueTask<TransportConnection?> accept = listener.AcceptAsync();
        await client.ConnectAsync(listener.EndPoint).WaitAsync(Step);
        TransportConnection server = (await accept.AsTask().WaitAsync(Step))!;
        ValueTask<int> pending = server.ReceiveAsync(new byte[16]);

        await ((IAsyncDisposable)factory).DisposeAsync();

        (await pending.AsTask().WaitAsync(Step)).ShouldBe(0);
        await server.DisposeAsync().AsTask().WaitAsync(Step);
        LoopState(factory).ShouldBe((0, 0));

        // The loops closed the connection with a reset.
        var reset = await Should.ThrowAsync<SocketException>(() => client.ReceiveAsync(new byte[1], SocketFlags.None).WaitAsync(Step));
        reset.SocketErrorCode.ShouldBe(SocketError.ConnectionReset);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_cancelled_pending_send_throws_OperationCanceledException_and_aborts()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(Transport);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        client.ReceiveBufferSize = 4096;
        using var cancel = new CancellationTokenSource();
        Task pending = server.SendAsync(new System.Buffers.ReadOnlySequence<byte>(new byte[16 * 1024 * 1024]), cancel.Token).AsTask();
        await Task.Delay(100);
        pending.IsCompleted.ShouldBeFalse("16 MiB fit in the socket buffers: the send never had to wait");

        cancel.Cancel();

        await Should.ThrowAsync<OperationCanceledException>(() => pending.WaitAsync(Step));
        (await server.ReceiveAsync(new byte[1]).AsTask().WaitAsync(Step)).ShouldBe(0);
    }
}
