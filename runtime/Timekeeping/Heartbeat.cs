using System;
using System.Threading;

namespace Falconet.Timekeeping;

/// <summary>
/// The server's one periodic timer: every tick passes the current timestamp to a callback that checks every
/// connection's deadline and data rates, so no connection needs a timer of its own.
/// </summary>
internal sealed class Heartbeat : IDisposable
{
    private readonly TimeProvider _clock;
    private readonly Action<long> _onTick;
    private readonly ITimer? _timer;
    private readonly Action? _tick;
    private int _running;

    /// <summary>
    /// Starts ticking every <paramref name="interval"/>: on the process's <see cref="SecondTicker"/> thread for the system
    /// clock at one second (a server's default), otherwise on <paramref name="clock"/>'s timers (tests drive a manual one).
    /// </summary>
    public Heartbeat(TimeProvider clock, TimeSpan interval, Action<long> onTick)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(interval, TimeSpan.Zero);
        _clock = clock;
        _onTick = onTick;
        if (ReferenceEquals(clock, TimeProvider.System) && interval == SecondTicker.Interval)
        {
            _tick = Tick;
            SecondTicker.Subscribe(_tick);
        }
        else
        {
            _timer = clock.CreateTimer(static state => ((Heartbeat)state!).Tick(), this, interval, interval);
        }
    }

    /// <summary>Runs one tick now, unless one is running (a tick that runs late must not overlap the next).</summary>
    internal void Tick()
    {
        if (Interlocked.Exchange(ref _running, 1) != 0)
        {
            return;
        }

        try
        {
            _onTick(_clock.GetTimestamp());
        }
        finally
        {
            Volatile.Write(ref _running, 0);
        }
    }

    /// <summary>Stops ticking; a tick already running finishes.</summary>
    public void Dispose()
    {
        _timer?.Dispose();
        if (_tick is not null)
        {
            SecondTicker.Unsubscribe(_tick);
        }
    }
}
