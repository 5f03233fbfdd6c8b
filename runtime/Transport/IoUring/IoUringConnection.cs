using System;
using System.Buffers;
using System.Net;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

/// <summary>A TCP connection owned by one io_uring loop: its receives, sends and close are submitted on that loop's ring.</summary>
/// <remarks>
/// <para>
/// Receives: one <c>IORING_OP_RECV</c> per <see cref="ReceiveAsync"/>, into the caller's memory (a pool block), submitted
/// with the loop turn's batch. Its completion completes the receive on the loop thread and, with
/// <see cref="IoScheduling.IoThreads"/>, runs the connection's code inline: it parses, handles, writes and asks for the
/// next receive before the loop reaps the next completion.
/// </para>
/// <para>
/// Sends: a send of at most one block is copied into the loop's staging area (<see cref="IoUringSendStaging"/>), submitted
/// with the turn's batch and completes at once; a larger one is sent from the caller's memory (<c>IORING_OP_SEND</c>, or
/// <c>IORING_OP_SENDMSG</c> over several blocks) and completes when the kernel took every byte. One send is in the kernel
/// at a time, so bytes go out in order and a connection has at most one staged send and the caller's own in flight.
/// </para>
/// <para>
/// Calls from other threads are recorded as flags and the connection is queued once on its loop, which performs them in a
/// fixed order. Closing cancels what is in flight (<c>IORING_OP_ASYNC_CANCEL</c>), waits for every completion, then closes
/// the descriptor through the ring (<c>IORING_OP_CLOSE</c>).
/// </para>
/// </remarks>
internal sealed unsafe partial class IoUringConnection : TransportConnection, IIoUringOperations, IThreadPoolWorkItem, IValueTaskSource<int>, IValueTaskSource
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

    // Operations, in the low byte of the user data.
    private const byte OpReceive = 1;
    private const byte OpSend = 2;
    private const byte OpCancel = 3;
    private const byte OpClose = 4;
    private const byte OpLingerTimer = 5;

    private readonly IoUringLoop _loop;
    private readonly int _fd;
    private readonly bool _inline;
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.None);
    private readonly Delivery? _receiveDelivery;
    private readonly Delivery? _sendDelivery;

    private ManualResetValueTaskSourceCore<int> _receive;
    private ManualResetValueTaskSourceCore<bool> _send;
    private Memory<byte> _receiveBuffer;
    private CancellationToken _receiveToken;
    private CancellationTokenRegistration _receiveRegistration;
    private ReadOnlySequence<byte> _sendBuffers;
    private CancellationToken _sendToken;
    private CancellationTokenRegistration _sendRegistration;

    private int _state;
    private int _posted;

    // The open descriptor counts one, and so does every outcome on its way to the thread pool: the close completes at zero,
    // once the descriptor is closed and every continuation has run (the memory a receive was given may go back then).
    private int _busy = 1;
    private int _receiveOutstanding;
    private int _sendOutstanding;
    private int _receiveStopped;

    // Loop-thread state.
    private int _operationsInFlight;
    private bool _receivePending;
    private bool _receiveInFlight;
    private bool _sendPending;
    private bool _sendInFlight;
    private bool _endOfStream;
    private bool _closing;
    private bool _reset;
    private bool _descriptorClosed;
    private bool _shutdownPending;
    private bool _sendShutDown;
    private bool _lingerTimerArmed;
    private bool _lingerTimerCancelled;
    private bool _receiveCancelled;
    private Exception? _sendError;
    private NativeState* _native;

    public IoUringConnection(IoUringLoop loop, int fd, IoScheduling scheduling)
    {
        _loop = loop;
        _fd = fd;
        _inline = scheduling == IoScheduling.IoThreads;
        if (!_inline)
        {
            // Outcomes reach the thread pool as these reusable work items: no allocation per completion.
            _receiveDelivery = new Delivery(this, send: false);
            _sendDelivery = new Delivery(this, send: true);
        }

        byte* address = stackalloc byte[128];
        uint length = 128;
        if (GetSockName(fd, address, &length) == 0)
        {
            LocalEndPoint = SocketAddressBytes.Read(new ReadOnlySpan<byte>(address, (int)length));
        }

        length = 128;
        if (GetPeerName(fd, address, &length) == 0)
        {
            RemoteEndPoint = SocketAddressBytes.Read(new ReadOnlySpan<byte>(address, (int)length));
        }

        _native = (NativeState*)NativeMemory.AllocZeroed((nuint)sizeof(NativeState));
        loop.Register(this);
        Interlocked.Increment(ref loop.OpenConnections);
        Interlocked.Increment(ref loop.AcceptedConnections);
    }

    public override EndPoint? LocalEndPoint { get; }

    public override EndPoint? RemoteEndPoint { get; }

    public override SlabMemoryPool Pool => _loop.Pool;

    public int Slot { get; set; } = -1;

    /// <summary>The loop that owns the connection.</summary>
    internal IoUringLoop Loop => _loop;

    /// <summary>True with <see cref="IoScheduling.ThreadPool"/>: completions reach the caller on a thread-pool thread, not on the loop.</summary>
    public override bool CompletesOnThreadPool => !_inline;

    /// <summary>Reads TCP_NODELAY back from the socket (diagnostics and tests); false once the descriptor is closed.</summary>
    internal bool IsNoDelay
    {
        get
        {
            if (Volatile.Read(ref _busy) == 0)
            {
                return false;
            }

            int value = 0;
            uint length = sizeof(int);
            return GetSocketOption(_fd, IpProtoTcp, TcpNoDelay, &value, &length) == 0 && value != 0;
        }
    }

    private bool IsClosedLocally => Volatile.Read(ref _state) != Open;

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

        if (Interlocked.Exchange(ref _receiveOutstanding, 1) != 0)
        {
            throw new InvalidOperationException("A receive is already pending on this connection.");
        }

        if (IsClosedLocally || Volatile.Read(ref _receiveStopped) != 0 || _endOfStream)
        {
            Volatile.Write(ref _receiveOutstanding, 0);
            return new ValueTask<int>(0);
        }

        if (_heldCount > 0 && _loop.IsLoopThread)
        {
            // A multishot receive brought the bytes already: no system call, no wait.
            int copied = TakeHeld(buffer);
            Volatile.Write(ref _receiveOutstanding, 0);
            return new ValueTask<int>(copied);
        }

        _receive.Reset();
        _receiveBuffer = buffer;
        _receiveToken = ct;
        if (ct.CanBeCanceled)
        {
            _receiveRegistration = ct.UnsafeRegister(static state => ((IoUringConnection)state!).Abort(), this);
        }

        if (_loop.IsLoopThread)
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

        if (Volatile.Read(ref _sendError) is { } failed)
        {
            // A staged send failed after it had completed: its caller learns of it now.
            Volatile.Write(ref _sendOutstanding, 0);
            return ValueTask.FromException(failed);
        }

        if (buffers.IsEmpty)
        {
            Volatile.Write(ref _sendOutstanding, 0);
            return default;
        }

        if (_loop.IsLoopThread && !ct.CanBeCanceled && !_sendInFlight && buffers.Length <= IoUringSendStaging.Limit)
        {
            // The common case: copied, submitted with the turn's batch, done.
            StageOnLoop(buffers);
            Volatile.Write(ref _sendOutstanding, 0);
            return default;
        }

        _send.Reset();
        _sendBuffers = buffers;
        _sendToken = ct;
        if (ct.CanBeCanceled)
        {
            _sendRegistration = ct.UnsafeRegister(static state => ((IoUringConnection)state!).Abort(), this);
        }

        if (_loop.IsLoopThread)
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

    public override bool IsOnIoThread => !_inline || _loop.IsLoopThread;

    public override void Schedule(IThreadPoolWorkItem workItem)
    {
        ArgumentNullException.ThrowIfNull(workItem);
        if (_inline)
        {
            _loop.Post(workItem);
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(workItem, preferLocal: false);
        }
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
        // Also after DisposeAsync: a graceful close still waiting for its last staged send becomes a reset.
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

    /// <summary>Runs the work other threads posted, on the loop thread (or on the thread pool once the loop has stopped, when the descriptor is closed already).</summary>
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

    public void OnCompletion(byte operation, int result, uint flags)
    {
        switch (operation)
        {
            case OpReceive when IsMultishot:
                OnMultishotCompleted(result, flags);
                break;
            case OpReceive:
                OnReceiveCompleted(result);
                break;
            case OpSend:
                OnSendCompleted(result);
                break;
            case OpLingerTimer:
                OnLingerTimer(result);
                break;
            case OpClose:
                OnDescriptorClosed(result);
                return;
            default:
                _operationsInFlight--;
                break;
        }

        if (_closing)
        {
            TryFinishClose();
        }
    }

    public void CloseForStop() => CloseOnLoop(reset: true);

    private void RunOrPost(int work)
    {
        if (_loop.IsLoopThread)
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
            _loop.Post(this);
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
    private sealed class Delivery(IoUringConnection connection, bool send) : IThreadPoolWorkItem
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
