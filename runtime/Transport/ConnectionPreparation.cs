using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Transport;

/// <summary>
/// Work a decorator does on an accepted connection before it hands it out (a TLS handshake, reading a PROXY header): runs
/// where the transport schedules the connection's code, within a deadline that its listener's heartbeat checks.
/// </summary>
/// <remarks>
/// The state is one <c>int</c>: running, timed out (the deadline passed) or stopped (the listener was unbound). Expiring or
/// stopping wakes the work by stopping the connection's receiving, so a pending read returns at once and the work fails
/// and closes with a FIN: no timer per connection.
/// </remarks>
internal abstract class ConnectionPreparation : IThreadPoolWorkItem
{
    private const int Running = 0;
    private const int TimedOut = 1;
    private const int Stopped = 2;

    private int _state;

    protected ConnectionPreparation(long now, long timeout)
    {
        Started = now;
        Deadline = now > long.MaxValue - timeout ? long.MaxValue : now + timeout;
    }

    /// <summary>When the work started (timestamp ticks of the server's clock).</summary>
    public long Started { get; }

    /// <summary>When the work must be done (timestamp ticks of the server's clock).</summary>
    public long Deadline { get; }

    /// <summary>True once the deadline passed (the work fails as a timeout, even if it was about to complete).</summary>
    public bool IsTimedOut => Volatile.Read(ref _state) == TimedOut;

    /// <summary>True once the listener stopped the work.</summary>
    public bool IsStopped => Volatile.Read(ref _state) == Stopped;

    /// <summary>Set by the listener, under its lock, when the finished work was queued to be handed out.</summary>
    public bool IsHandedOut { get; set; }

    /// <summary>The connection handed out once the work is done.</summary>
    public abstract TransportConnection Connection { get; }

    void IThreadPoolWorkItem.Execute() => _ = RunAsync();

    /// <summary>Does the work, then hands the connection out through the listener or closes it (and calls the listener's Ended).</summary>
    protected abstract Task RunAsync();

    /// <summary>The heartbeat found the deadline passed: stop receiving, so the work ends at once.</summary>
    public void Expire()
    {
        if (Interlocked.CompareExchange(ref _state, TimedOut, Running) == Running)
        {
            Connection.StopReceiving();
        }
    }

    /// <summary>The listener is unbinding: end the work the same way.</summary>
    public void Stop()
    {
        Interlocked.CompareExchange(ref _state, Stopped, Running);
        Connection.StopReceiving();
    }

    /// <summary>The listener is unbinding: running work stops, finished work not handed out yet closes.</summary>
    public void StopOrClose()
    {
        if (IsHandedOut)
        {
            CloseUnclaimed();
        }
        else
        {
            Stop();
        }
    }

    /// <summary>Closes finished work whose connection nobody took (the listener was unbound first); counted as the server stopping.</summary>
    protected abstract void CloseUnclaimed();

    /// <summary>Closes at once (work that did not end after <see cref="Stop"/>).</summary>
    public void Abort() => Connection.Abort();
}
