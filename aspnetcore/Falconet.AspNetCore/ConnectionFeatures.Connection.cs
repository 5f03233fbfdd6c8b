using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;

namespace Falconet.AspNetCore;

/// <summary>
/// The features of the connection itself, as Kestrel passes them through to every request: its id, items and state kept
/// across its requests, the token cancelled when it closes, the token cancelled when it is asked to close (the host stops,
/// or the application calls RequestClose), and callbacks run once it has closed. Falconet disposes this object when the
/// connection closes (<see cref="Falconet.Http.HttpContext.ConnectionState"/>), which is when those fire.
/// </summary>
internal sealed partial class ConnectionFeatures<TContext> : IConnectionIdFeature, IConnectionItemsFeature, IPersistentStateFeature,
    IConnectionLifetimeFeature, IConnectionLifetimeNotificationFeature, IConnectionCompleteFeature, IAsyncDisposable
{
    private IDictionary<object, object?>? _connectionItems;
    private IDictionary<object, object?>? _persistentState;
    private CancellationTokenSource? _connectionClosed;
    private CancellationTokenSource? _closeRequested;
    private List<KeyValuePair<Func<object, Task>, object>>? _onConnectionCompleted;

    // IConnectionItemsFeature

    IDictionary<object, object?> IConnectionItemsFeature.Items
    {
        get => _connectionItems ??= new Dictionary<object, object?>();
        set => _connectionItems = value;
    }

    // IPersistentStateFeature

    IDictionary<object, object?> IPersistentStateFeature.State => _persistentState ??= new Dictionary<object, object?>();

    // IConnectionLifetimeFeature

    /// <summary>Cancelled once the connection has closed (made on first use).</summary>
    public CancellationToken ConnectionClosed
    {
        get => (_connectionClosed ??= new CancellationTokenSource()).Token;
        set => throw new NotSupportedException("The connection's ConnectionClosed token belongs to the server.");
    }

    // The request's Abort and the connection's are one: the connection is reset after the handler returns.
    void IConnectionLifetimeFeature.Abort() => Abort();

    // IConnectionLifetimeNotificationFeature

    /// <summary>Cancelled when the host begins to stop (ApplicationStopping) or the application asks the connection to close.</summary>
    public CancellationToken ConnectionClosedRequested
    {
        get => (_closeRequested ??= CancellationTokenSource.CreateLinkedTokenSource(_settings.Stopping)).Token;
        set => throw new NotSupportedException("The connection's ConnectionClosedRequested token belongs to the server.");
    }

    /// <summary>The connection closes after the current response (which says Connection: close when it has not started yet).</summary>
    public void RequestClose()
    {
        _context.Response.KeepAlive = false;
        _closeRequested?.Cancel();
        _closeRequested ??= CreateCancelled();
    }

    // IConnectionCompleteFeature

    void IConnectionCompleteFeature.OnCompleted(Func<object, Task> callback, object state)
        => (_onConnectionCompleted ??= new()).Add(new KeyValuePair<Func<object, Task>, object>(callback, state));

    /// <summary>The connection has closed: cancels ConnectionClosed, then runs the connection's OnCompleted callbacks, last registered first.</summary>
    public async ValueTask DisposeAsync()
    {
        _connectionClosed?.Cancel();
        if (_onConnectionCompleted is { } callbacks)
        {
            for (int i = callbacks.Count - 1; i >= 0; i--)
            {
                try
                {
                    await callbacks[i].Key(callbacks[i].Value).ConfigureAwait(false);
                }
                catch (Exception exception)
                {
                    AspNetCoreLog.ConnectionCompletedCallbackFailed(_settings.Logger, ConnectionId, exception);
                }
            }
        }

        _connectionClosed?.Dispose();
        _closeRequested?.Dispose();
    }

    private static CancellationTokenSource CreateCancelled()
    {
        var cancelled = new CancellationTokenSource();
        cancelled.Cancel();
        return cancelled;
    }
}
