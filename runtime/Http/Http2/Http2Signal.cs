using System;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Falconet.Http.Http2;

/// <summary>
/// One waiter at a time, woken by the connection: a handler waiting for request body bytes, or for flow-control window
/// and output room to send its response. Reused for the life of the stream object; waiting allocates nothing.
/// </summary>
/// <remarks>
/// Armed and set under the connection's lock, so a wake-up between a failed try and the wait is never lost. The waiter
/// always continues on the thread pool: the one who wakes it holds the lock (and is often the read loop), and must not run
/// application code there.
/// </remarks>
internal sealed class Http2Signal : IValueTaskSource
{
    private ManualResetValueTaskSourceCore<bool> _core = new() { RunContinuationsAsynchronously = true };
    private bool _armed;

    /// <summary>True while someone waits.</summary>
    public bool IsArmed => _armed;

    /// <summary>Starts a wait (under the connection's lock); completes on <see cref="Set"/> or <see cref="Fail"/>.</summary>
    public ValueTask Arm()
    {
        _core.Reset();
        _armed = true;
        return new ValueTask(this, _core.Version);
    }

    /// <summary>Wakes the waiter, if one waits (under the connection's lock).</summary>
    public void Set()
    {
        if (_armed)
        {
            _armed = false;
            _core.SetResult(true);
        }
    }

    /// <summary>Wakes the waiter with <paramref name="error"/>, if one waits (under the connection's lock).</summary>
    public void Fail(Exception error)
    {
        if (_armed)
        {
            _armed = false;
            _core.SetException(error);
        }
    }

    void IValueTaskSource.GetResult(short token) => _core.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _core.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _core.OnCompleted(continuation, state, token, flags);
}
