using System;
using System.Buffers;
using System.Net;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;

namespace Falconet.Transport.Libuv;

/// <summary>A TCP connection owned by one libuv loop: its reads, writes and close all happen on that loop's thread.</summary>
/// <remarks>
/// <para>
/// Reads: while a receive is pending the stream is reading, and libuv's allocation callback hands out the receive's
/// own memory (a pool block), so bytes land where the parser reads them. A read completes the receive on the loop
/// thread and, with <see cref="IoScheduling.IoThreads"/>, runs the connection's code inline: it parses, runs a
/// handler that completes synchronously, writes, and asks for the next receive before the callback returns, so
/// the stream keeps reading. When no receive is pending after a read, reading stops until one is.
/// </para>
/// <para>
/// Writes: a send tries <c>uv_try_write</c> with one buffer per block and completes synchronously when the kernel
/// took everything; what is left goes to <c>uv_write</c>, whose callback completes the send. The HTTP layer sends one
/// batch at a time and waits for it, which bounds the bytes in flight per connection.
/// </para>
/// <para>
/// Calls from other threads (a handler that completed asynchronously, a timer, shutdown) are recorded as flags and
/// the connection is queued once on its loop, which performs them in a fixed order.
/// </para>
/// </remarks>
internal sealed unsafe partial class LibuvConnection : TransportConnection, IThreadPoolWorkItem, IValueTaskSource<int>, IValueTaskSource
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

    private const int StackBuffers = 32;

    private readonly LibuvLoop _loop;
    private readonly bool _inline;
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.None);
    private readonly Delivery? _receiveDelivery;
    private readonly Delivery? _sendDelivery;
    private void* _handle;
    private void* _writeRequest;
    private GCHandle _self;

    private ManualResetValueTaskSourceCore<int> _receive;
    private ManualResetValueTaskSourceCore<bool> _send;
    private Memory<byte> _receiveBuffer;
    private CancellationToken _receiveToken;
    private CancellationTokenRegistration _receiveRegistration;
    private ReadOnlySequence<byte> _sendBuffers;
    private CancellationToken _sendToken;
    private CancellationTokenRegistration _sendRegistration;
    private LibuvNative.Buffer* _buffers;
    private int _bufferCapacity;

    private readonly bool _isPipe;
    private int _state;
    private int _posted;

    // The open handle counts one, and so does every outcome on its way to the thread pool: the close completes at zero,
    // once the handle is freed and every continuation has run (the memory a receive was given may go back then).
    private int _busy = 1;
    private int _receiveOutstanding;
    private int _sendOutstanding;
    private int _receiveStopped;
    private bool _receivePending;
    private bool _sendPending;
    private bool _reading;
    private bool _endOfStream;
    private bool _handleClosed;
    private bool _shutdownPending;
    private bool _sendShutDown;

    /// <summary>Wraps an accepted handle on its loop: a TCP handle, or a pipe when <paramref name="unixEndPoint"/> (the listener's Unix domain socket endpoint) is set.</summary>
    /// <param name="loop">The loop that owns the connection.</param>
    /// <param name="handle">The accepted handle.</param>
    /// <param name="noDelay">Whether to turn Nagle's algorithm off (TCP only).</param>
    /// <param name="scheduling">Where the connection's code continues.</param>
    /// <param name="unixEndPoint">The listener's Unix domain socket endpoint when <paramref name="handle"/> is a pipe; null for TCP.</param>
    public LibuvConnection(LibuvLoop loop, void* handle, bool noDelay, IoScheduling scheduling, EndPoint? unixEndPoint = null)
    {
        _loop = loop;
        _handle = handle;
        _isPipe = unixEndPoint is not null;
        _inline = scheduling == IoScheduling.IoThreads;
        if (!_inline)
        {
            // Outcomes reach the thread pool as these reusable work items: no allocation per completion.
            _receiveDelivery = new Delivery(this, send: false);
            _sendDelivery = new Delivery(this, send: true);
        }
        _self = GCHandle.Alloc(this);
        LibuvNative.SetData(handle, GCHandle.ToIntPtr(_self));
        _writeRequest = NativeMemory.AllocZeroed(LibuvNative.RequestSize(LibuvNative.RequestTypeWrite));
        LibuvNative.SetData(_writeRequest, GCHandle.ToIntPtr(_self));
        if (_isPipe)
        {
            // A Unix domain socket: no Nagle to turn off, and a peer without an address.
            LocalEndPoint = unixEndPoint;
            Interlocked.Increment(ref loop.OpenConnections);
            Interlocked.Increment(ref loop.AcceptedConnections);
            return;
        }

        if (noDelay)
        {
            LibuvNative.TcpNoDelay(handle, 1);
        }

        byte* address = stackalloc byte[128];
        int length = 128;
        if (LibuvNative.TcpGetSockName(handle, address, &length) == 0)
        {
            LocalEndPoint = LibuvNative.ReadSocketAddress(new ReadOnlySpan<byte>(address, length));
        }

        length = 128;
        if (LibuvNative.TcpGetPeerName(handle, address, &length) == 0)
        {
            RemoteEndPoint = LibuvNative.ReadSocketAddress(new ReadOnlySpan<byte>(address, length));
        }

        Interlocked.Increment(ref loop.OpenConnections);
        Interlocked.Increment(ref loop.AcceptedConnections);
    }

    public override EndPoint? LocalEndPoint { get; }

    public override EndPoint? RemoteEndPoint { get; }

    public override SlabMemoryPool Pool => _loop.Pool;

    /// <summary>The loop that owns the connection.</summary>
    internal LibuvLoop Loop => _loop;

    /// <summary>Reads TCP_NODELAY back from the socket (diagnostics and tests); false once the handle is closed.</summary>
    internal bool IsNoDelay
    {
        get
        {
            nint fd;
            void* handle = _handle;
            if (handle is null || LibuvNative.FileNo(handle, &fd) != 0)
            {
                return false;
            }

            int value = 0;
            uint length = sizeof(int);
            return LibuvNative.GetSocketOption((int)fd, LibuvNative.IpProtoTcp, LibuvNative.TcpNoDelayOption, &value, &length) == 0 && value != 0;
        }
    }

    private bool IsClosedLocally => Volatile.Read(ref _state) != Open;

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default)
    {
        if (ct.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(ct);
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

        _receive.Reset();
        _receiveBuffer = buffer;
        _receiveToken = ct;
        if (ct.CanBeCanceled)
        {
            _receiveRegistration = ct.UnsafeRegister(static state => ((LibuvConnection)state!).Abort(), this);
        }

        if (_loop.IsLoopThread)
        {
            _receivePending = true;
            StartReadingOnLoop();
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

        if (buffers.IsEmpty)
        {
            Volatile.Write(ref _sendOutstanding, 0);
            return default;
        }

        if (_loop.IsLoopThread && !ct.CanBeCanceled)
        {
            // The common case: everything goes to the kernel at once and the send completes synchronously.
            int written = TryWriteOnLoop(buffers, out Exception? error);
            if (error is not null)
            {
                Volatile.Write(ref _sendOutstanding, 0);
                return ValueTask.FromException(error);
            }

            if (written == buffers.Length)
            {
                Volatile.Write(ref _sendOutstanding, 0);
                return default;
            }

            _send.Reset();
            _sendPending = true;
            StartWriteOnLoop(buffers.Slice(written));
            return new ValueTask(this, _send.Version);
        }

        _send.Reset();
        _sendBuffers = buffers;
        _sendToken = ct;
        if (ct.CanBeCanceled)
        {
            _sendRegistration = ct.UnsafeRegister(static state => ((LibuvConnection)state!).Abort(), this);
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

    /// <summary>True with <see cref="IoScheduling.ThreadPool"/>: completions reach the caller on a thread-pool thread, not on the loop.</summary>
    public override bool CompletesOnThreadPool => !_inline;

    /// <summary>Linux's IOV_MAX: a send fills its own uv_buf_t array (on the stack, or one kept per connection), so any count gathers without allocating.</summary>
    public override int MaxGatheredSegments => 1024;

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
        if (Interlocked.Exchange(ref _receiveStopped, 1) != 0)
        {
            return;
        }

        RunOrPost(PostedStopReceiving);
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
        if (Interlocked.CompareExchange(ref _state, Aborted, Open) == Open)
        {
            RunOrPost(PostedAbort);
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
            StartReadingOnLoop();
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
            ShutdownSendOnLoop();
            CloseOnLoop(reset: false);
        }
    }

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
    private sealed class Delivery(LibuvConnection connection, bool send) : IThreadPoolWorkItem
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
