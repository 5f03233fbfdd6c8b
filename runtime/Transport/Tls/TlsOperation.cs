using System;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Falconet.Transport.Tls;

/// <summary>
/// The reusable awaitable of one direction of a <see cref="TlsConnection"/>: it stands for a pending inner operation
/// (a SslStream read, or an encrypt-and-send) and counts it as outstanding until the caller's continuation has run.
/// </summary>
/// <remarks>
/// That is the transport contract's promise to <see cref="TransportConnection.DisposeAsync"/>: the HTTP layer returns the
/// blocks it handed to a receive only once the receive is over, continuation included. The continuation runs inline on
/// the thread that completed the inner operation, as it would on the inner transport; nothing is allocated per call.
/// </remarks>
internal sealed class TlsOperation : IValueTaskSource<int>, IValueTaskSource
{
    private readonly Func<ValueTask<int>, int> _complete;
    private readonly Action _onInnerCompleted;
    private ManualResetValueTaskSourceCore<int> _core;
    private ValueTask<int> _inner;
    private int _busy;
    private int _outstanding;
    private TaskCompletionSource? _idleWaiter;

    /// <summary><paramref name="complete"/> reads the inner result (it may map or throw); it runs once per pending call.</summary>
    public TlsOperation(Func<ValueTask<int>, int> complete)
    {
        _complete = complete;
        _onInnerCompleted = OnInnerCompleted;
    }

    /// <summary>Takes over a pending inner operation; returns the token of the awaitable that completes with it.</summary>
    public short Begin(ValueTask<int> pending)
    {
        if (Interlocked.Exchange(ref _busy, 1) != 0)
        {
            throw new InvalidOperationException("An operation of this kind is already pending on this connection.");
        }

        Interlocked.Increment(ref _outstanding);
        _core.Reset();
        _inner = pending;
        pending.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onInnerCompleted);
        return _core.Version;
    }

    /// <summary>True while a call is pending (from <see cref="Begin"/> until its outcome is delivered).</summary>
    public bool IsPending => Volatile.Read(ref _busy) != 0;

    private void OnInnerCompleted()
    {
        ValueTask<int> inner = _inner;
        _inner = default;
        int result = 0;
        Exception? error = null;
        try
        {
            result = _complete(inner);
        }
        catch (Exception exception)
        {
            error = exception;
        }

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

        // After the continuation ran inline: only now may a disposal reuse the memory handed to the call.
        if (Interlocked.Decrement(ref _outstanding) == 0 && Volatile.Read(ref _idleWaiter) is not null)
        {
            Interlocked.Exchange(ref _idleWaiter, null)?.TrySetResult();
        }
    }

    /// <summary>Completes once no call is pending anymore (a Task only when one still is, at close).</summary>
    public Task WaitUntilIdleAsync()
    {
        if (Volatile.Read(ref _outstanding) == 0)
        {
            return Task.CompletedTask;
        }

        var waiter = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        waiter = Interlocked.CompareExchange(ref _idleWaiter, waiter, null) ?? waiter;

        // Published before the count is read again; the completion clears the count before it reads the waiter.
        if (Volatile.Read(ref _outstanding) == 0)
        {
            Interlocked.Exchange(ref _idleWaiter, null)?.TrySetResult();
        }

        return waiter.Task;
    }

    int IValueTaskSource<int>.GetResult(short token) => _core.GetResult(token);

    void IValueTaskSource.GetResult(short token) => _core.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _core.GetStatus(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _core.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);
}
