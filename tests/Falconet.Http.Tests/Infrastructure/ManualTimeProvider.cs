using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>A clock that moves only when a test advances it; its timers fire inside <see cref="Advance"/>, in due order.</summary>
/// <remarks>
/// Timeout tests drive the server's heartbeat and shutdown waits with it, so they neither sleep nor depend on
/// how fast the machine is: a deadline passes exactly when the test says so.
/// </remarks>
internal sealed class ManualTimeProvider : TimeProvider
{
    private static readonly DateTimeOffset s_epoch = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private readonly Lock _gate = new();
    private readonly List<ManualTimer> _timers = new();
    private readonly List<TimeSpan> _unclaimedOneShots = new();
    private readonly List<(TimeSpan DueTime, TaskCompletionSource Armed)> _oneShotWaiters = new();
    private long _ticks;

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    /// <summary>Time advanced so far.</summary>
    public TimeSpan Elapsed => TimeSpan.FromTicks(Interlocked.Read(ref _ticks));

    public override long GetTimestamp() => Interlocked.Read(ref _ticks);

    public override DateTimeOffset GetUtcNow() => s_epoch.AddTicks(Interlocked.Read(ref _ticks));

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        var timer = new ManualTimer(this, callback, state);
        timer.Change(dueTime, period);
        return timer;
    }

    /// <summary>
    /// Completes once a one-shot timer of <paramref name="dueTime"/> has been armed (for example the wait of
    /// <c>Task.WaitAsync(timeout, provider)</c>); each arming satisfies one call.
    /// </summary>
    public Task WaitForOneShotTimerAsync(TimeSpan dueTime)
    {
        lock (_gate)
        {
            if (_unclaimedOneShots.Remove(dueTime))
            {
                return Task.CompletedTask;
            }

            var armed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _oneShotWaiters.Add((dueTime, armed));
            return armed.Task;
        }
    }

    /// <summary>
    /// Advances the clock by <paramref name="step"/> at a time, giving the server a moment of real time after each, until
    /// <paramref name="done"/> holds (checked first), for at most 200 steps; true when it held.
    /// </summary>
    public async Task<bool> AdvanceUntilAsync(Func<bool> done, TimeSpan step)
    {
        for (int i = 0; i < 200 && !done(); i++)
        {
            Advance(step);
            await Task.Delay(20);
        }

        return done();
    }

    /// <summary>Moves the clock forward, firing every timer that falls due on the way (periodic ones once per period).</summary>
    public void Advance(TimeSpan delta)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(delta, TimeSpan.Zero);
        long target = Interlocked.Read(ref _ticks) + delta.Ticks;
        while (true)
        {
            ManualTimer? next = null;
            lock (_gate)
            {
                foreach (ManualTimer timer in _timers)
                {
                    if (timer.Due <= target && (next is null || timer.Due < next.Due))
                    {
                        next = timer;
                    }
                }

                if (next is null)
                {
                    Interlocked.Exchange(ref _ticks, target);
                    return;
                }

                if (next.Due > _ticks)
                {
                    Interlocked.Exchange(ref _ticks, next.Due);
                }

                if (next.Period > 0)
                {
                    next.Due += next.Period;
                }
                else
                {
                    _timers.Remove(next);
                }
            }

            // Outside the lock: a callback may create or change timers.
            next.Fire();
        }
    }

    private void Arm(ManualTimer timer, TimeSpan dueTime, TimeSpan period)
    {
        TaskCompletionSource? waiter = null;
        lock (_gate)
        {
            _timers.Remove(timer);
            if (dueTime == Timeout.InfiniteTimeSpan)
            {
                return;
            }

            timer.Due = _ticks + dueTime.Ticks;
            timer.Period = period == Timeout.InfiniteTimeSpan || period == TimeSpan.Zero ? 0 : period.Ticks;
            _timers.Add(timer);
            if (timer.Period == 0)
            {
                int index = _oneShotWaiters.FindIndex(w => w.DueTime == dueTime);
                if (index >= 0)
                {
                    waiter = _oneShotWaiters[index].Armed;
                    _oneShotWaiters.RemoveAt(index);
                }
                else
                {
                    _unclaimedOneShots.Add(dueTime);
                }
            }
        }

        waiter?.TrySetResult();
    }

    private void Disarm(ManualTimer timer)
    {
        lock (_gate)
        {
            _timers.Remove(timer);
        }
    }

    private sealed class ManualTimer(ManualTimeProvider owner, TimerCallback callback, object? state) : ITimer
    {
        public long Due { get; set; }

        public long Period { get; set; }

        public void Fire() => callback(state);

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            owner.Arm(this, dueTime, period);
            return true;
        }

        public void Dispose() => owner.Disarm(this);

        public ValueTask DisposeAsync()
        {
            Dispose();
            return default;
        }
    }
}
