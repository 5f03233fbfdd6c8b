using System;
using System.Buffers;
using System.Net;
using System.Runtime.CompilerServices;
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
internal sealed unsafe class LibuvConnection : TransportConnection, IThreadPoolWorkItem, IValueTaskSource<int>, IValueTaskSource
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

    public LibuvConnection(LibuvLoop loop, void* handle, bool noDelay, IoScheduling scheduling)
    {
        _loop = loop;
        _handle = handle;
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

    // ---- Reads ----

    private void StartReadingOnLoop()
    {
        if (!_receivePending)
        {
            return;
        }

        if (_handleClosed || Volatile.Read(ref _receiveStopped) != 0 || _endOfStream)
        {
            CompleteReceive(0);
            return;
        }

        if (!_reading)
        {
            int result = LibuvNative.ReadStart(_handle, &OnAlloc, &OnRead);
            if (result < 0)
            {
                CompleteReceive(new LibuvException("uv_read_start", result));
                return;
            }

            _reading = true;
        }
    }

    private void StopReadingOnLoop()
    {
        if (_reading && !_handleClosed)
        {
            LibuvNative.ReadStop(_handle);
        }

        _reading = false;
    }

    private void StopReceivingOnLoop()
    {
        StopReadingOnLoop();
        if (_receivePending)
        {
            CompleteReceive(0);
        }
    }

    [UnmanagedCallersOnly]
    private static void OnAlloc(void* handle, nuint suggestedSize, LibuvNative.Buffer* buffer)
    {
        var connection = (LibuvConnection)GCHandle.FromIntPtr(LibuvNative.GetData(handle)).Target!;
        if (!connection._receivePending)
        {
            // No receive to read into: libuv reports ENOBUFS and the read callback stops reading.
            *buffer = default;
            return;
        }

        // Pool blocks live in pinned slabs, so the address stays valid until the receive completes.
        Memory<byte> memory = connection._receiveBuffer;
        *buffer = new LibuvNative.Buffer((byte*)Unsafe.AsPointer(ref MemoryMarshal.GetReference(memory.Span)), memory.Length);
    }

    [UnmanagedCallersOnly]
    private static void OnRead(void* handle, nint read, LibuvNative.Buffer* buffer)
    {
        var connection = (LibuvConnection)GCHandle.FromIntPtr(LibuvNative.GetData(handle)).Target!;
        try
        {
            connection.OnReadOnLoop((int)read);
        }
        catch (Exception exception)
        {
            LibuvLog.CallbackFailed(connection._loop.Logger, connection._loop.Index, exception);
        }
    }

    private void OnReadOnLoop(int read)
    {
        if (read == 0)
        {
            // EAGAIN: nothing was read into the buffer; the receive stays pending.
            return;
        }

        if (read == LibuvNative.ENOBUFS && !_receivePending)
        {
            StopReadingOnLoop();
            return;
        }

        if (read > 0)
        {
            // With inline scheduling the connection's code runs here and normally asks for the next receive.
            CompleteReceive(read);
        }
        else if (read == LibuvNative.EOF)
        {
            _endOfStream = true;
            StopReadingOnLoop();
            CompleteReceive(0);
            return;
        }
        else
        {
            StopReadingOnLoop();
            CompleteReceive(read == LibuvNative.ECONNRESET
                ? new ConnectionResetException("The peer reset the connection.", new LibuvException("read", read))
                : new LibuvException("read", read));
            return;
        }

        if (!_receivePending && !_handleClosed)
        {
            StopReadingOnLoop();
        }
    }

    private void CompleteReceive(int read)
    {
        _receivePending = false;
        _receiveBuffer = default;
        _receiveRegistration.Dispose();
        _receiveRegistration = default;

        // Cleared before the result is set: an inline continuation asks for the next receive from inside SetResult.
        Volatile.Write(ref _receiveOutstanding, 0);
        Deliver(send: false, read, _receiveToken.IsCancellationRequested ? new OperationCanceledException(_receiveToken) : null);
    }

    private void CompleteReceive(Exception error)
    {
        _receivePending = false;
        _receiveBuffer = default;
        _receiveRegistration.Dispose();
        _receiveRegistration = default;
        Volatile.Write(ref _receiveOutstanding, 0);
        Deliver(send: false, 0, _receiveToken.IsCancellationRequested ? new OperationCanceledException(_receiveToken) : error);
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

    // ---- Writes ----

    private void SendOnLoop()
    {
        if (!_sendPending)
        {
            return;
        }

        ReadOnlySequence<byte> buffers = _sendBuffers;
        _sendBuffers = default;
        if (_handleClosed)
        {
            CompleteSend(new ConnectionAbortedException("The connection was aborted or disposed."));
            return;
        }

        int written = TryWriteOnLoop(buffers, out Exception? error);
        if (error is not null)
        {
            CompleteSend(error);
        }
        else if (written == buffers.Length)
        {
            CompleteSend(null);
        }
        else
        {
            StartWriteOnLoop(buffers.Slice(written));
        }
    }

    /// <summary>Writes what the kernel takes now, without waiting; returns the bytes written.</summary>
    private int TryWriteOnLoop(in ReadOnlySequence<byte> buffers, out Exception? error)
    {
        error = null;
        int count = CountSegments(buffers);
        LibuvNative.Buffer* stack = stackalloc LibuvNative.Buffer[StackBuffers];
        LibuvNative.Buffer* array = count <= StackBuffers ? stack : RentBuffers(count);
        Fill(buffers, array);
        int written = LibuvNative.TryWrite(_handle, array, (uint)count);
        if (written >= 0)
        {
            return written;
        }

        if (written == LibuvNative.EAGAIN)
        {
            return 0;
        }

        error = written is LibuvNative.ECONNRESET or LibuvNative.EPIPE
            ? new ConnectionResetException("The peer reset the connection.", new LibuvException("uv_try_write", written))
            : new LibuvException("uv_try_write", written);
        return 0;
    }

    /// <summary>Queues the rest of a send with <c>uv_write</c>; its callback completes the send.</summary>
    private void StartWriteOnLoop(in ReadOnlySequence<byte> rest)
    {
        int count = CountSegments(rest);
        LibuvNative.Buffer* stack = stackalloc LibuvNative.Buffer[StackBuffers];
        LibuvNative.Buffer* array = count <= StackBuffers ? stack : RentBuffers(count);
        Fill(rest, array);

        // libuv copies the buffer descriptors into the request; the bytes themselves stay in the blocks until the callback.
        int result = LibuvNative.Write(_writeRequest, _handle, array, (uint)count, &OnWrite);
        if (result < 0)
        {
            CompleteSend(new LibuvException("uv_write", result));
        }
    }

    private static int CountSegments(in ReadOnlySequence<byte> buffers)
    {
        if (buffers.IsSingleSegment)
        {
            return 1;
        }

        int count = 0;
        foreach (ReadOnlyMemory<byte> segment in buffers)
        {
            if (!segment.IsEmpty)
            {
                count++;
            }
        }

        return count;
    }

    private static void Fill(in ReadOnlySequence<byte> buffers, LibuvNative.Buffer* array)
    {
        int i = 0;
        foreach (ReadOnlyMemory<byte> segment in buffers)
        {
            if (!segment.IsEmpty)
            {
                // Pool blocks live in pinned slabs; other memory a caller sends must be pinned by the caller.
                array[i++] = new LibuvNative.Buffer((byte*)Unsafe.AsPointer(ref MemoryMarshal.GetReference(segment.Span)), segment.Length);
            }
        }
    }

    private LibuvNative.Buffer* RentBuffers(int count)
    {
        if (count > _bufferCapacity)
        {
            _buffers = (LibuvNative.Buffer*)NativeMemory.Realloc(_buffers, (nuint)(count * sizeof(LibuvNative.Buffer)));
            _bufferCapacity = count;
        }

        return _buffers;
    }

    [UnmanagedCallersOnly]
    private static void OnWrite(void* request, int status)
    {
        var connection = (LibuvConnection)GCHandle.FromIntPtr(LibuvNative.GetData(request)).Target!;
        try
        {
            connection.CompleteSend(status switch
            {
                0 => null,
                LibuvNative.ECANCELED => new ConnectionAbortedException("The connection was aborted or disposed."),
                LibuvNative.ECONNRESET or LibuvNative.EPIPE => new ConnectionResetException("The peer reset the connection.", new LibuvException("write", status)),
                _ => new LibuvException("write", status),
            });
            if (connection._shutdownPending)
            {
                connection.ShutdownSendOnLoop();
            }
        }
        catch (Exception exception)
        {
            LibuvLog.CallbackFailed(connection._loop.Logger, connection._loop.Index, exception);
        }
    }

    private void CompleteSend(Exception? error)
    {
        if (!_sendPending)
        {
            return;
        }

        _sendPending = false;
        _sendRegistration.Dispose();
        _sendRegistration = default;
        Volatile.Write(ref _sendOutstanding, 0);
        CancellationToken token = _sendToken;
        _sendToken = default;

        // A cancelled send aborted the connection: its caller learns why, not only that the write failed.
        Deliver(send: true, 0, error is not null && token.IsCancellationRequested ? new OperationCanceledException(token) : error);
    }

    // ---- Closing ----

    private void ShutdownSendOnLoop()
    {
        if (_handleClosed || _sendShutDown)
        {
            return;
        }

        if (_sendPending)
        {
            // After the bytes already queued: the write callback comes back here.
            _shutdownPending = true;
            return;
        }

        _shutdownPending = false;
        _sendShutDown = true;
        nint fd;
        if (LibuvNative.FileNo(_handle, &fd) == 0)
        {
            // Synchronous shutdown(SHUT_WR): the FIN follows the bytes the kernel already has (uv_shutdown would wait a loop turn).
            LibuvNative.Shutdown((int)fd, LibuvNative.ShutWrite);
        }
    }

    /// <summary>Closes the handle on the loop thread: a pending receive returns 0, a pending write fails; with <paramref name="reset"/> the peer gets an RST.</summary>
    internal void CloseOnLoop(bool reset)
    {
        if (_handleClosed)
        {
            return;
        }

        _handleClosed = true;
        Volatile.Write(ref _state, reset ? Aborted : Math.Max(Volatile.Read(ref _state), Disposed));
        _reading = false;
        if (_receivePending)
        {
            CompleteReceive(0);
        }

        if (reset && LibuvNative.TcpCloseReset(_handle, &OnClosed) == 0)
        {
            return;
        }

        LibuvNative.Close(_handle, &OnClosed);
    }

    [UnmanagedCallersOnly]
    private static void OnClosed(void* handle)
    {
        GCHandle self = GCHandle.FromIntPtr(LibuvNative.GetData(handle));
        var connection = (LibuvConnection)self.Target!;
        try
        {
            // A pending write was cancelled before this callback; it completed its send already.
            connection.CompleteSend(new ConnectionAbortedException("The connection was aborted or disposed."));
            NativeMemory.Free(connection._writeRequest);
            NativeMemory.Free(connection._buffers);
            NativeMemory.Free(handle);
            connection._writeRequest = null;
            connection._buffers = null;
            connection._handle = null;
            self.Free();
            Interlocked.Decrement(ref connection._loop.OpenConnections);
            connection.ReleaseBusy();
        }
        catch (Exception exception)
        {
            LibuvLog.CallbackFailed(connection._loop.Logger, connection._loop.Index, exception);
        }
    }

    /// <summary>Frees a client handle that never became a connection.</summary>
    [UnmanagedCallersOnly]
    internal static void OnOrphanClosed(void* handle) => NativeMemory.Free(handle);

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
