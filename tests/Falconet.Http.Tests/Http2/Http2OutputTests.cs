using System;
using System.Buffers;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http;
using Falconet.Http.Http2;
using Falconet.Transport;
using Shouldly;
using Xunit;

namespace Falconet.Http.Tests.Http2;

/// <summary>
/// The connection's output when a send runs on another thread than the one that ends the connection: a handler's flush
/// or a stopping server's GOAWAY is still inside the transport when the read loop closes and releases the connection.
/// </summary>
public sealed class Http2OutputTests
{
    [Fact]
    public async Task A_send_still_inside_the_transport_is_waited_for_after_the_close_and_keeps_its_blocks_until_it_ends()
    {
        using var pool = new SlabMemoryPool("h2-output", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        var transport = new HeldSendTransport(pool);
        var output = new Http2Output(transport, 64 * 1024, new DataRateMonitor(TimeProvider.System, default, default));
        lock (output.Gate)
        {
            output.WriteGoAway(7, Http2ErrorCode.NoError);
        }

        // The sender: its send is taken by the transport and does not return until released.
        Task sender = Task.Factory.StartNew(output.SendNow, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        transport.SendEntered.Wait(TimeSpan.FromSeconds(10)).ShouldBeTrue();

        // The read loop ends the connection meanwhile: it closes the output, then waits before it disposes the transport.
        output.Close(new ConnectionAbortedException("closed"));
        ValueTask sent = output.WaitUntilSentAsync();
        sent.IsCompleted.ShouldBeFalse("the send is still inside the transport");

        // Released while the send runs: the blocks it carries stay with it.
        output.Dispose();
        pool.BlocksOutstanding.ShouldBeGreaterThan(0);

        transport.Release.Set();
        await sender.WaitAsync(TimeSpan.FromSeconds(10));
        await sent.AsTask().WaitAsync(TimeSpan.FromSeconds(10));
        transport.SentBytes.ShouldBe(17, "the GOAWAY frame: a 9-byte header and 8 bytes of payload");
        pool.BlocksOutstanding.ShouldBe(0);
    }

    [Fact]
    public async Task A_send_that_fails_after_the_output_was_disposed_returns_its_blocks()
    {
        using var pool = new SlabMemoryPool("h2-output-failed", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        var transport = new HeldSendTransport(pool) { FailWith = new ConnectionResetException("reset") };
        var output = new Http2Output(transport, 64 * 1024, new DataRateMonitor(TimeProvider.System, default, default));
        lock (output.Gate)
        {
            output.WriteGoAway(1, Http2ErrorCode.NoError);
        }

        Task sender = Task.Factory.StartNew(output.SendNow, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        transport.SendEntered.Wait(TimeSpan.FromSeconds(10)).ShouldBeTrue();
        output.Close(new ConnectionAbortedException("closed"));
        output.Dispose();

        transport.Release.Set();
        await sender.WaitAsync(TimeSpan.FromSeconds(10));
        await output.WaitUntilSentAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(10));
        output.IsClosed.ShouldBeTrue();
        pool.BlocksOutstanding.ShouldBe(0);
    }

    [Fact]
    public void An_output_disposed_with_no_send_in_flight_returns_its_blocks_at_once()
    {
        using var pool = new SlabMemoryPool("h2-output-idle", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        var output = new Http2Output(new HeldSendTransport(pool), 64 * 1024, new DataRateMonitor(TimeProvider.System, default, default));
        lock (output.Gate)
        {
            output.WriteGoAway(1, Http2ErrorCode.NoError);
        }

        pool.BlocksOutstanding.ShouldBeGreaterThan(0);
        output.Close(new ConnectionAbortedException("closed"));
        output.WaitUntilSentAsync().IsCompleted.ShouldBeTrue();
        output.Dispose();
        pool.BlocksOutstanding.ShouldBe(0);
    }

    /// <summary>A transport whose send completes synchronously, but only once the test releases it.</summary>
    private sealed class HeldSendTransport(SlabMemoryPool pool) : TransportConnection
    {
        public ManualResetEventSlim SendEntered { get; } = new();

        public ManualResetEventSlim Release { get; } = new();

        public Exception? FailWith { get; init; }

        public long SentBytes { get; private set; }

        public override EndPoint? LocalEndPoint => null;

        public override EndPoint? RemoteEndPoint => null;

        public override SlabMemoryPool Pool => pool;

        public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default) => new(0);

        public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default)
        {
            SendEntered.Set();
            Release.Wait(TimeSpan.FromSeconds(30)).ShouldBeTrue();
            if (FailWith is { } failure)
            {
                return ValueTask.FromException(failure);
            }

            SentBytes += buffers.Length;
            return default;
        }

        public override void Schedule(IThreadPoolWorkItem workItem) => ThreadPool.UnsafeQueueUserWorkItem(workItem, preferLocal: false);

        public override void StopReceiving()
        {
        }

        public override void ShutdownSend()
        {
        }

        public override void Abort()
        {
        }

        public override ValueTask DisposeAsync() => default;
    }
}
