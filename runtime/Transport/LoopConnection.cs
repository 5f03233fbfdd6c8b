using System;
using System.Buffers;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Falconet.Transport;

/// <summary>
/// What a connection owned by one event loop thread does the same whatever the loop runs on (libuv, io_uring): the
/// contract's entry points, the hand-over of calls made on other threads, the delivery of outcomes inline or on the thread
/// pool, and the close that completes once every continuation has run. The transport supplies the operations on its loop.
/// </summary>
/// <remarks>
/// <para>
/// Every operation on the loop's handle or ring is made on the loop thread. Another thread that wants something of the
/// connection (a handler that completed on the thread pool, the heartbeat's <see cref="StopReceiving"/>, <see cref="Abort"/>,
/// the server's stop) records it as a flag and queues the connection once on its loop, which performs the requests in a
/// fixed order: receive, send, stop receiving, shut down the sending side, abort, close.
/// </para>
/// <para>
/// With <see cref="IoScheduling.IoThreads"/> a receive or send that completes on the loop continues its caller right there;
/// with <see cref="IoScheduling.ThreadPool"/> the outcome travels to the thread pool in a reusable work item per direction.
/// No Task, closure or work item is allocated per operation.
/// </para>
/// </remarks>
internal abstract class LoopConnection : TransportConnection, IThreadPoolWorkItem, IValueTaskSource<int>, IValueTaskSource
{
    private const int Open = 0;
    private const int Aborted = 1;
    private const int Disposed = 2;

    // Work other threads ask the loop for.
    private const int PostedReceive = 1;
    private const int PostedSend = 2;
    private const int PostedStopReceiving = 4;
    private const int PostedShutdownSend = 8;
    private const int PostedAbort = 16;
    private const int PostedDispose = 32;

    private readonly bool _inline;
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.None);
    private readonly Delivery? _receiveDelivery;
    private readonly Delivery? _sendDelivery;

    private ManualResetValueTaskSourceCore<int> _receive;
    private ManualResetValueTaskSourceCore<bool> _send;
    private CancellationToken _receiveToken;
    private CancellationTokenRegistration _receiveRegistration;
    private CancellationToken _sendToken;
    private CancellationTokenRegistration _sendRegistration;

    private int _state;
    private int _posted;

    // The open handle counts one, and so does every outcome on its way to the thread pool: the close completes at zero,
    // once the handle is closed and every continuation has run (the memory a receive was given may go back then).
    private int _busy = 1;
    private int _receiveOutstanding;
    private int _sendOutstanding;
    private int _receiveStopped;

    // Loop-thread state the transports share.
    private protected Memory<byte> _receiveBuffer;
    private protected ReadOnlySequence<byte> _sendBuffers;
    private protected bool _receivePending;
    private protected bool _sendPending;
    private protected bool _endOfStream;

    protected LoopConnection(IoScheduling scheduling)
    {
        _inline = scheduling == IoScheduling.IoThreads;
        if (!_inline)
        {
            // Outcomes reach the thread pool as these reusable work items: no allocation per completion.
            _receiveDelivery = new Delivery(this, send: false);
            _sendDelivery = new Delivery(this, send: true);
        }
    }

    /// <summary>True on the thread of the loop that owns the connection.</summary>
    private protected abstract bool IsLoopThread { get; }

    /// <summary>True once the connection was aborted or disposed locally.</summary>
    private protected bool IsClosedLocally => Volatile.Read(ref _state) != Open;

    /// <summary>True once <see cref="StopReceiving"/> was called.</summary>
    private protected bool IsReceiveStopped => Volatile.Read(ref _receiveStopped) != 0;

    public override bool IsOnIoThread => !_inline || IsLoopThread;

    internal override bool IsOwnIoThread => _inline && IsLoopThread;

    public override void Schedule(IThreadPoolWorkItem workItem)
    {
        ArgumentNullException.ThrowIfNull(workItem);
        if (_inline)
        {
            Post(workItem);
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(workItem, preferLocal: false);
        }
    }

    /// <summary>True with <see cref="IoScheduling.ThreadPool"/>: completions reach the caller on a thread-pool thread, not on the loop.</summary>
    public override bool CompletesOnThreadPool => !_inline;

    /// <summary>
    /// Linux's IOV_MAX: both loop transports fill their own native vector of buffers for a gathered send (libuv's
    /// uv_buf_t array on the stack or kept per connection, io_uring's iovec array kept per connection), so any count up
    /// to this gathers without allocating.
    /// </summary>
    public override int MaxGatheredSegments => 1024;

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default)
    {
        if (ct.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(ct);
        }

        if (buffer.IsEmpty)
        {
            // 0 means the end of the stream: a receive of nothing could not be told from it.
            throw new ArgumentException("A receive needs memory to receive into.", nameof(buffer));
        }

        return BeginReceive(buffer, ct);
    }

    /// <summary>
    /// Where the transport can (<see cref="TransportConnection.CanWaitForData"/>): a receive into no memory, which completes with 0 once bytes
    /// are at hand (held by the transport), the peer closed, or the receive failed or stopped.
    /// </summary>
    internal override ValueTask<int> WaitForDataAsync(CancellationToken ct)
    {
        if (!CanWaitForData)
        {
            return base.WaitForDataAsync(ct);
        }

        return ct.IsCancellationRequested ? ValueTask.FromCanceled<int>(ct) : BeginReceive(Memory<byte>.Empty, ct);
    }

    private ValueTask<int> BeginReceive(Memory<byte> buffer, CancellationToken ct)
    {
        if (Interlocked.Exchange(ref _receiveOutstanding, 1) != 0)
        {
            throw new InvalidOperationException("A receive is already pending on this connection.");
        }

        if (IsClosedLocally || IsReceiveStopped || _endOfStream)
        {
            Volatile.Write(ref _receiveOutstanding, 0);
            return new ValueTask<int>(0);
        }

        if (IsLoopThread && TryReceiveAtOnce(buffer, out int received))
        {
            Volatile.Write(ref _receiveOutstanding, 0);
            return new ValueTask<int>(received);
        }

        _receive.Reset();
        _receiveBuffer = buffer;
        _receiveToken = ct;
        if (ct.CanBeCanceled)
        {
            _receiveRegistration = ct.UnsafeRegister(static state => ((LoopConnection)state!).Abort(), this);
        }

        if (IsLoopThread)
        {
            _receivePending = true;
            StartReceiveOnLoop();
        }
        else
        {
            // The loop marks the receive pending when it takes the request: its state is only ever changed there.
            PostToLoop(PostedReceive);
        }

        return new ValueTask<int>(this, _receive.Version);
    }

    public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default)
    {
        if (ct.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(ct);
        }

        if (Interlocked.Exchange(ref _sendOutstanding, 1) != 0)
        {
            throw new InvalidOperationException("A send is already pending on this connection.");
        }

        if (IsClosedLocally)
        {
            Volatile.Write(ref _sendOutstanding, 0);
            return ValueTask.FromException(new ConnectionAbortedException("The connection was aborted or disposed."));
        }

        if (SendFailure is { } failed)
        {
            Volatile.Write(ref _sendOutstanding, 0);
            return ValueTask.FromException(failed);
        }

        if (buffers.IsEmpty)
        {
            Volatile.Write(ref _sendOutstanding, 0);
            return default;
        }

        if (IsLoopThread && !ct.CanBeCanceled && TrySendAtOnce(ref buffers, out Exception? error))
        {
            // The common case: the send is done (or failed) before this returns.
            Volatile.Write(ref _sendOutstanding, 0);
            return error is null ? default : ValueTask.FromException(error);
        }

        _send.Reset();
        _sendBuffers = buffers;
        _sendToken = ct;
        if (ct.CanBeCanceled)
        {
            _sendRegistration = ct.UnsafeRegister(static state => ((LoopConnection)state!).Abort(), this);
        }

        if (IsLoopThread)
        {
            _sendPending = true;
            SendOnLoop();
        }
        else
        {
            PostToLoop(PostedSend);
        }

        return new ValueTask(this, _send.Version);
    }

    public override void StopReceiving()
    {
        if (Interlocked.Exchange(ref _receiveStopped, 1) == 0)
        {
            RunOrPost(PostedStopReceiving);
        }
    }

    public override void ShutdownSend()
    {
        if (!IsClosedLocally)
        {
            RunOrPost(PostedShutdownSend);
        }
    }

    public override void Abort()
    {
        // Also after DisposeAsync: a graceful close still in progress becomes a reset.
        while (true)
        {
            int state = Volatile.Read(ref _state);
            if (state == Aborted)
            {
                return;
            }

            if (Interlocked.CompareExchange(ref _state, Aborted, state) == state)
            {
                RunOrPost(PostedAbort);
                return;
            }
        }
    }

    public override ValueTask DisposeAsync()
    {
        if (Interlocked.CompareExchange(ref _state, Disposed, Open) == Open)
        {
            RunOrPost(PostedDispose);
        }

        Task closed = _closed.Task;
        return closed.IsCompletedSuccessfully ? default : new ValueTask(closed);
    }

    /// <summary>Runs the work other threads posted, on the loop thread (or on the thread pool once the loop has stopped, when the handle is closed already).</summary>
    void IThreadPoolWorkItem.Execute()
    {
        int posted = Interlocked.Exchange(ref _posted, 0);
        if ((posted & PostedReceive) != 0)
        {
            _receivePending = true;
            StartReceiveOnLoop();
        }

        if ((posted & PostedSend) != 0)
        {
            _sendPending = true;
            SendOnLoop();
        }

        if ((posted & PostedStopReceiving) != 0)
        {
            StopReceivingOnLoop();
        }

        if ((posted & PostedShutdownSend) != 0)
        {
            ShutdownSendOnLoop();
        }

        if ((posted & PostedAbort) != 0)
        {
            CloseOnLoop(reset: true);
        }

        if ((posted & PostedDispose) != 0)
        {
            CloseOnLoop(reset: false);
        }
    }

    /// <summary>Runs <paramref name="item"/> on the connection's loop (on the thread pool once the loop has stopped).</summary>
    private protected abstract void Post(IThreadPoolWorkItem item);

    /// <summary>On the loop, a receive is pending (<see cref="_receivePending"/>, into <see cref="_receiveBuffer"/>): start it or complete it.</summary>
    private protected abstract void StartReceiveOnLoop();

    /// <summary>On the loop, a send is pending (<see cref="_sendPending"/>, of <see cref="_sendBuffers"/>): start it or complete it.</summary>
    private protected abstract void SendOnLoop();

    /// <summary>On the loop: a pending receive completes soon (with what arrived, or 0).</summary>
    private protected abstract void StopReceivingOnLoop();

    /// <summary>On the loop: FIN after the bytes already sent.</summary>
    private protected abstract void ShutdownSendOnLoop();

    /// <summary>On the loop: closes (FIN first, or a reset); <see cref="ReleaseHandle"/> once the handle is closed.</summary>
    internal abstract void CloseOnLoop(bool reset);

    /// <summary>On the loop, before a receive waits: true with the bytes already at hand (none by default).</summary>
    private protected virtual bool TryReceiveAtOnce(Memory<byte> buffer, out int received)
    {
        received = 0;
        return false;
    }

    /// <summary>
    /// On the loop, for a send its caller cannot cancel: true when it is done (or failed, with <paramref name="error"/>)
    /// before this returns; otherwise <paramref name="buffers"/> is what is left to send, and the send waits for it.
    /// </summary>
    private protected abstract bool TrySendAtOnce(ref ReadOnlySequence<byte> buffers, out Exception? error);

    /// <summary>A failure of a send that had completed for its caller already, reported by the next send (none by default).</summary>
    private protected virtual Exception? SendFailure => null;

    /// <summary>Marks the connection closed locally, from the loop (later receives return 0, sends fail).</summary>
    private protected void MarkClosedLocally(bool reset)
        => Volatile.Write(ref _state, reset ? Aborted : Math.Max(Volatile.Read(ref _state), Disposed));

    /// <summary>Completes the pending receive with <paramref name="read"/> bytes (0: end of stream), or with <paramref name="error"/>.</summary>
    private protected void CompleteReceive(int read, Exception? error = null)
    {
        _receivePending = false;
        _receiveBuffer = default;
        _receiveRegistration.Dispose();
        _receiveRegistration = default;

        // Cleared before the result is set: an inline continuation asks for the next receive from inside SetResult.
        Volatile.Write(ref _receiveOutstanding, 0);
        Deliver(send: false, read, _receiveToken.IsCancellationRequested ? new OperationCanceledException(_receiveToken) : error);
    }

    /// <summary>Completes the pending send, if any, with success or <paramref name="error"/>.</summary>
    private protected void CompleteSend(Exception? error)
    {
        if (!_sendPending)
        {
            return;
        }

        _sendPending = false;
        _sendBuffers = default;
        _sendRegistration.Dispose();
        _sendRegistration = default;
        Volatile.Write(ref _sendOutstanding, 0);
        CancellationToken token = _sendToken;
        _sendToken = default;

        // A cancelled send aborted the connection: its caller learns why, not only that the write failed.
        Deliver(send: true, 0, error is not null && token.IsCancellationRequested ? new OperationCanceledException(token) : error);
    }

    /// <summary>The handle is closed: the close completes once every outcome on its way to the thread pool has been delivered.</summary>
    private protected void ReleaseHandle() => ReleaseBusy();

    private void RunOrPost(int work)
    {
        if (IsLoopThread)
        {
            Interlocked.Or(ref _posted, work);
            ((IThreadPoolWorkItem)this).Execute();
        }
        else
        {
            PostToLoop(work);
        }
    }

    private void PostToLoop(int work)
    {
        if (Interlocked.Or(ref _posted, work) == 0)
        {
            Post(this);
        }
    }

    /// <summary>Completes a receive or a send here (inline, on the loop), or through its reusable work item on the thread pool.</summary>
    private void Deliver(bool send, int result, Exception? error)
    {
        Delivery? delivery = send ? _sendDelivery : _receiveDelivery;
        if (delivery is null)
        {
            Complete(send, result, error);
            return;
        }

        Interlocked.Increment(ref _busy);
        delivery.Result = result;
        delivery.Error = error;
        ThreadPool.UnsafeQueueUserWorkItem(delivery, preferLocal: false);
    }

    private void Complete(bool send, int result, Exception? error)
    {
        if (send)
        {
            if (error is null)
            {
                _send.SetResult(true);
            }
            else
            {
                _send.SetException(error);
            }
        }
        else if (error is null)
        {
            _receive.SetResult(result);
        }
        else
        {
            _receive.SetException(error);
        }
    }

    private void ReleaseBusy()
    {
        if (Interlocked.Decrement(ref _busy) == 0)
        {
            _closed.TrySetResult();
        }
    }

    /// <summary>Carries one direction's outcome to the thread pool and completes it there (<see cref="IoScheduling.ThreadPool"/>).</summary>
    private sealed class Delivery(LoopConnection connection, bool send) : IThreadPoolWorkItem
    {
        public int Result;
        public Exception? Error;

        public void Execute()
        {
            Exception? error = Error;
            Error = null;
            try
            {
                // The continuation runs here, inside SetResult, so the close waits for it.
                connection.Complete(send, Result, error);
            }
            finally
            {
                connection.ReleaseBusy();
            }
        }
    }

    // ---- IValueTaskSource ----

    int IValueTaskSource<int>.GetResult(short token) => _receive.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _receive.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _receive.OnCompleted(continuation, state, token, flags);

    void IValueTaskSource.GetResult(short token) => _send.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _send.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _send.OnCompleted(continuation, state, token, flags);
}
