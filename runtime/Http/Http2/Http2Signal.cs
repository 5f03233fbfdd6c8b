using System;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Falconet.Http.Http2;

/// <summary>
/// One waiter at a time, woken by the connection: a handler waiting for request body bytes, or for flow-control window
/// and output room to send its response. Reused for the life of the stream object; waiting allocates nothing.
/// </summary>
/// <remarks>
/// Armed and set under the connection's lock, so a wake-up between a failed try and the wait is never lost. A waiter woken
/// with <see cref="Set"/> or <see cref="Fail"/> continues on the thread pool: the one who wakes it holds the lock, and must
/// not run application code there. The read loop wakes a body read in two steps instead: <see cref="Detach"/> under the
/// lock, then <see cref="WakeDetached"/> once the lock is released, which continues the waiter right there, on the thread
/// that runs the connection's handlers (no hand-off to the pool and back).
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

        // A wake-up of this wait from another thread goes to the pool (WakeDetached cleared this for the wait before).
        _core.RunContinuationsAsynchronously = true;
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

    /// <summary>
    /// Takes the waiter, if one waits, for a wake-up after the lock is released (under the connection's lock): true when
    /// the caller must call <see cref="WakeDetached"/>. A <see cref="Set"/> or <see cref="Fail"/> meanwhile does nothing;
    /// the waiter checks the stream's state again when it wakes.
    /// </summary>
    public bool Detach()
    {
        if (!_armed)
        {
            return false;
        }

        _armed = false;
        return true;
    }

    /// <summary>Wakes a waiter taken with <see cref="Detach"/>, continuing it on the calling thread (never under the lock).</summary>
    public void WakeDetached()
    {
        // Only this completion runs inline: the next Arm turns the pool hand-off back on before anyone else can wake it.
        _core.RunContinuationsAsynchronously = false;
        _core.SetResult(true);
    }

    void IValueTaskSource.GetResult(short token) => _core.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _core.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _core.OnCompleted(continuation, state, token, flags);
}
