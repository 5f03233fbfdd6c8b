using System;
using System.IO;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Falconet.Transport.Sockets;

/// <summary>A reusable socket operation of one connection: the event args, the awaitable source and the lane work item in one object, so no Task is allocated per call.</summary>
/// <remarks>
/// A call that completes synchronously returns a completed ValueTask and never touches the source, so a run
/// of synchronous completions does not recurse. A pending call completes on a thread-pool or socket engine
/// thread, which records the outcome and delivers it: at once, so the awaiting continuation runs on that thread,
/// or, when the connection has an I/O lane, by scheduling this object there. A call counts as outstanding from its start until its outcome is
/// delivered (the continuation has run when it runs inline), which is what <see cref="WaitUntilIdleAsync"/>
/// waits for before a connection's memory may be reused.
/// </remarks>
internal abstract class SocketOperation : SocketAsyncEventArgs, IThreadPoolWorkItem
{
    private static readonly Action<object?> s_cancel = static state => ((SocketConnection)state!).Abort();

    private readonly IoLane? _lane;
    private ManualResetValueTaskSourceCore<int> _core;
    private CancellationTokenRegistration _registration;
    private CancellationToken _token;
    private int _busy;
    private int _outstanding;
    private TaskCompletionSource? _idleWaiter;
    private int _result;
    private Exception? _error;

    protected SocketOperation(SocketConnection connection, IoLane? lane)
        : base(unsafeSuppressExecutionContextFlow: true)
    {
        Connection = connection;
        _lane = lane;
    }

    protected SocketConnection Connection { get; }

    protected Socket Socket => Connection.Socket;

    protected abstract string Kind { get; }

    /// <summary>Claims the operation for one call and arms the source; returns the source token for the call.</summary>
    protected short Begin(CancellationToken ct)
    {
        if (Interlocked.Exchange(ref _busy, 1) != 0)
        {
            throw new InvalidOperationException($"A {Kind} is already pending on this connection.");
        }

        Interlocked.Increment(ref _outstanding);
        _core.Reset();
        _token = ct;
        if (ct.CanBeCanceled)
        {
            // Registered before the socket call, so a completion can never race with the registration.
            _registration = ct.UnsafeRegister(s_cancel, Connection);
        }

        return _core.Version;
    }

    /// <summary>Releases the operation after a call that completed synchronously.</summary>
    protected void EndSynchronously()
    {
        _registration.Dispose();
        _registration = default;
        _token = default;
        Volatile.Write(ref _busy, 0);
        Finish();
    }

    /// <summary>Records the outcome of a pending call and delivers it: here, or on the connection's lane.</summary>
    protected void CompleteAsynchronously(int result, Exception? error)
    {
        _result = result;
        _error = error;
        if (_lane is null)
        {
            ((IThreadPoolWorkItem)this).Execute();
        }
        else
        {
            _lane.Schedule(this);
        }
    }

    void IThreadPoolWorkItem.Execute()
    {
        _registration.Dispose();
        _registration = default;
        _token = default;
        int result = _result;
        Exception? error = _error;
        _error = null;

        // Free before signalling: the continuation runs inline and may start the next call at once.
        Volatile.Write(ref _busy, 0);
        if (error is null)
        {
            _core.SetResult(result);
        }
        else
        {
            _core.SetException(error);
        }

        // Only now, after an inline continuation has run, may a waiting disposal reuse the memory.
        Finish();
    }

    /// <summary>
    /// Completes once no call is outstanding: a pending one has completed and delivered its outcome. Connections
    /// wait for this after closing, before the memory handed to the call goes back to the pool.
    /// </summary>
    internal ValueTask WaitUntilIdleAsync()
    {
        if (Volatile.Read(ref _outstanding) == 0)
        {
            return default;
        }

        // Rare (an operation pending at close), so a Task is fine. Its continuation runs where the operation
        // finishes (with a lane, the lane thread, so the connection returns its blocks on the pool's owner path).
        var waiter = new TaskCompletionSource();
        TaskCompletionSource? existing = Interlocked.CompareExchange(ref _idleWaiter, waiter, null);
        waiter = existing ?? waiter;

        // Published before reading the count; Finish decrements before reading the waiter.
        if (Volatile.Read(ref _outstanding) == 0)
        {
            Interlocked.Exchange(ref _idleWaiter, null)?.TrySetResult();
        }

        return new ValueTask(waiter.Task);
    }

    private void Finish()
    {
        if (Interlocked.Decrement(ref _outstanding) == 0 && Volatile.Read(ref _idleWaiter) is not null)
        {
            Interlocked.Exchange(ref _idleWaiter, null)?.TrySetResult();
        }
    }

    /// <summary>Maps a failed socket call to the exception the HTTP layer catches.</summary>
    protected Exception CreateException(SocketError error)
    {
        if (_token.IsCancellationRequested)
        {
            return new OperationCanceledException($"The {Kind} was canceled and the connection aborted.", _token);
        }

        if (Connection.IsClosedLocally || error is SocketError.OperationAborted or SocketError.Interrupted)
        {
            return new ConnectionAbortedException($"The connection was aborted locally during a {Kind}.");
        }

        var inner = new SocketException((int)error);
        return error switch
        {
            SocketError.ConnectionReset or SocketError.ConnectionAborted or SocketError.Shutdown or SocketError.NotConnected
                => new ConnectionResetException($"The peer reset the connection during a {Kind}.", inner),
            _ => new IOException($"The {Kind} failed: {inner.Message}", inner),
        };
    }

    protected bool IsCanceled => _token.IsCancellationRequested;

    protected ValueTaskSourceStatus GetStatusCore(short token) => _core.GetStatus(token);

    protected int GetResultCore(short token) => _core.GetResult(token);

    protected void OnCompletedCore(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);
}
