using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Timekeeping;
using Shouldly;

namespace Falconet.Http.Tests.Timekeeping;

/// <summary>The server's one timer, on a manual clock.</summary>
public sealed class HeartbeatTests
{
    [Fact]
    public void Each_interval_passes_the_clock_s_timestamp_to_the_callback()
    {
        var clock = new ManualTimeProvider();
        var ticks = new List<long>();
        using var heartbeat = new Heartbeat(clock, TimeSpan.FromSeconds(1), ticks.Add);

        clock.Advance(TimeSpan.FromMilliseconds(999));
        ticks.ShouldBeEmpty();
        clock.Advance(TimeSpan.FromSeconds(3).Add(TimeSpan.FromMilliseconds(1)));

        ticks.ShouldBe(new[] { 1 * TimeSpan.TicksPerSecond, 2 * TimeSpan.TicksPerSecond, 3 * TimeSpan.TicksPerSecond, 4 * TimeSpan.TicksPerSecond });
    }

    [Fact]
    public void After_dispose_it_no_longer_ticks()
    {
        var clock = new ManualTimeProvider();
        int ticks = 0;
        var heartbeat = new Heartbeat(clock, TimeSpan.FromSeconds(1), _ => ticks++);
        clock.Advance(TimeSpan.FromSeconds(2));
        heartbeat.Dispose();
        clock.Advance(TimeSpan.FromSeconds(5));

        ticks.ShouldBe(2);
    }

    [Fact]
    public async Task A_tick_that_runs_late_is_not_overlapped_by_the_next_one()
    {
        var clock = new ManualTimeProvider();
        var inside = new ManualResetEventSlim();
        var release = new ManualResetEventSlim();
        int running = 0;
        int overlapped = 0;
        int completed = 0;
        Heartbeat? heartbeat = null;
        heartbeat = new Heartbeat(clock, TimeSpan.FromSeconds(1), _ =>
        {
            if (Interlocked.Increment(ref running) > 1)
            {
                Interlocked.Increment(ref overlapped);
            }

            inside.Set();
            release.Wait(TestTimeouts.Operation);
            Interlocked.Decrement(ref running);
            Interlocked.Increment(ref completed);
        });
        using (heartbeat)
        {
            Task slowTick = Task.Run(() => clock.Advance(TimeSpan.FromSeconds(1)));
            inside.Wait(TestTimeouts.Operation).ShouldBeTrue();

            // The next tick arrives while the first still runs: it is skipped, not run alongside.
            heartbeat.Tick();
            release.Set();
            await slowTick.WaitAsync(TestTimeouts.Operation);
        }

        overlapped.ShouldBe(0);
        completed.ShouldBe(1);
    }
}
