using System.Threading;

namespace Falconet.Http;

/// <summary>
/// The cancellation behind <see cref="HttpContext.RequestAborted"/>: one per connection. The token source is made only
/// when a handler asks for the token, and reused by the next request while it was not cancelled, so a request that
/// never asks costs one field read.
/// </summary>
/// <remarks>
/// Aborting is sticky: once the client went away (a receive returned 0 or failed) or the request was aborted, every
/// later request of the connection sees a cancelled token too. The source is cancelled on the thread pool, since the
/// abort is noticed where the connection's code runs, a libuv loop thread by default, where the application's callbacks
/// must not run.
/// </remarks>
internal sealed class RequestAbortSignal
{
    private readonly Lock _gate = new();
    private CancellationTokenSource? _source;
    private bool _aborted;

    /// <summary>True once the connection was aborted or its client went away.</summary>
    public bool IsAborted => Volatile.Read(ref _aborted);

    /// <summary>The token of the current request; cancelled when the client goes away or the request is aborted.</summary>
    public CancellationToken Token
    {
        get
        {
            CancellationTokenSource? source = Volatile.Read(ref _source);
            if (source is not null)
            {
                return source.Token;
            }

            lock (_gate)
            {
                if (_aborted)
                {
                    return new CancellationToken(canceled: true);
                }

                _source ??= new CancellationTokenSource();
                return _source.Token;
            }
        }
    }

    /// <summary>Cancels the token (once, from any thread); the cancellation callbacks run on the thread pool.</summary>
    public void Abort()
    {
        CancellationTokenSource? source;
        lock (_gate)
        {
            if (_aborted)
            {
                return;
            }

            _aborted = true;
            source = _source;
        }

        if (source is not null)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static source => source.Cancel(), source, preferLocal: false);
        }
    }

    /// <summary>After a request: keeps the source for the next request when it can be reset (never cancelled).</summary>
    public void EndRequest()
    {
        if (Volatile.Read(ref _source) is null)
        {
            return;
        }

        lock (_gate)
        {
            if (!_aborted && _source is not null && !_source.TryReset())
            {
                _source = null;
            }
        }
    }
}
