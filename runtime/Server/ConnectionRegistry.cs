using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Server;

/// <summary>
/// The open connections of a server, within its limit: the accept loops add them, each removes itself when it has
/// ended, the heartbeat visits them and a stopping server waits until none is left. Places can also be reserved for
/// connections not handed to the server yet (TLS handshakes in progress): they count against the limit as open ones do.
/// </summary>
/// <typeparam name="TConnection">The connection type (the server's <see cref="Http.Http1.HttpConnection"/>; tests use their own).</typeparam>
internal sealed class ConnectionRegistry<TConnection>
    where TConnection : class
{
    private readonly HashSet<TConnection> _connections = new(ReferenceEqualityComparer.Instance);
    private readonly Lock _gate = new();
    private readonly int _limit;
    private TaskCompletionSource? _empty;
    private int _reserved;
    private long _endedTotal;

    /// <summary>Creates a registry that holds at most <paramref name="limit"/> connections at once.</summary>
    public ConnectionRegistry(int limit = int.MaxValue)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limit, 1);
        _limit = limit;
    }

    /// <summary>The most connections the registry holds at once.</summary>
    public int Limit => _limit;

    /// <summary>Places taken now: connections registered and places reserved.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _connections.Count + _reserved;
            }
        }
    }

    /// <summary>Registers <paramref name="connection"/>; false, and nothing registered, when the registry is at its limit.</summary>
    public bool TryAdd(TConnection connection)
    {
        lock (_gate)
        {
            if (_connections.Count + _reserved >= _limit)
            {
                return false;
            }

            _connections.Add(connection);
            return true;
        }
    }

    /// <summary>Takes a place for a connection the server does not run yet; false when the registry is at its limit.</summary>
    public bool TryReserve()
    {
        lock (_gate)
        {
            if (_connections.Count + _reserved >= _limit)
            {
                return false;
            }

            _reserved++;
            return true;
        }
    }

    /// <summary>Gives back a place taken with <see cref="TryReserve"/>.</summary>
    public void Unreserve()
    {
        lock (_gate)
        {
            _reserved--;
        }
    }

    /// <summary>
    /// Removes a connection that has ended, adding <paramref name="count"/> (what it counted, see <see cref="Sum"/>) to the
    /// total of the ended ones; the last one out completes <see cref="WhenEmptyAsync"/>.
    /// </summary>
    public void Remove(TConnection connection, long count = 0)
    {
        lock (_gate)
        {
            _connections.Remove(connection);
            _endedTotal += count;
            if (_connections.Count == 0)
            {
                _empty?.TrySetResult();
            }
        }
    }

    /// <summary>
    /// Calls <paramref name="visit"/> for every registered connection, under the registry's lock: a visit must be short
    /// and must not add or remove connections (a static lambda and a state argument keep it allocation-free).
    /// </summary>
    public void ForEach<TState>(TState state, Action<TConnection, TState> visit)
    {
        lock (_gate)
        {
            foreach (TConnection connection in _connections)
            {
                visit(connection, state);
            }
        }
    }

    /// <summary>
    /// A count each connection keeps (requests, say), summed over the registered connections and the ended ones (what
    /// <see cref="Remove"/> was given), under the lock, so a connection that ends meanwhile is counted once: connections count
    /// on their own, with no shared counter on their hot path, and the total is made when someone asks.
    /// </summary>
    public long Sum(Func<TConnection, long> count)
    {
        lock (_gate)
        {
            long total = _endedTotal;
            foreach (TConnection connection in _connections)
            {
                total += count(connection);
            }

            return total;
        }
    }

    /// <summary>A copy of the registered connections, for work that must not run under the lock.</summary>
    public TConnection[] Snapshot()
    {
        lock (_gate)
        {
            var copy = new TConnection[_connections.Count];
            _connections.CopyTo(copy);
            return copy;
        }
    }

    /// <summary>Completes once no connection is registered (at once when none is).</summary>
    public Task WhenEmptyAsync()
    {
        lock (_gate)
        {
            if (_connections.Count == 0)
            {
                return Task.CompletedTask;
            }

            if (_empty is null || _empty.Task.IsCompleted)
            {
                _empty = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            }

            return _empty.Task;
        }
    }
}
