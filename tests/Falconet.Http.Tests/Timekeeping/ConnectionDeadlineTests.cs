using System.Threading;
using System.Threading.Tasks;
using Shouldly;

namespace Falconet.Http.Tests.Timekeeping;

/// <summary>The compare-and-swap protocol between a connection's loop (arming) and the heartbeat (expiring).</summary>
public sealed class ConnectionDeadlineTests
{
    [Fact]
    public void A_new_deadline_runs_none_and_the_heartbeat_never_expires_it()
    {
        var deadline = new ConnectionDeadline();

        deadline.Value.ShouldBe(ConnectionDeadline.None);
        deadline.TryExpireIfPassed(long.MaxValue - 2).ShouldBeFalse();
        deadline.TryExpireNow().ShouldBeFalse();
        deadline.IsExpired.ShouldBeFalse();
    }

    [Fact]
    public void An_armed_deadline_expires_once_it_has_passed_and_only_for_the_first_caller()
    {
        var deadline = new ConnectionDeadline();
        deadline.TrySet(100).ShouldBeTrue();

        deadline.TryExpireIfPassed(99).ShouldBeFalse();
        deadline.IsExpired.ShouldBeFalse();
        deadline.TryExpireIfPassed(100).ShouldBeTrue();
        deadline.IsExpired.ShouldBeTrue();
        deadline.TryExpireIfPassed(200).ShouldBeFalse();
        deadline.TryExpireNow().ShouldBeFalse();
    }

    [Fact]
    public void Once_expired_the_loop_can_neither_arm_nor_clear_it()
    {
        var deadline = new ConnectionDeadline();
        deadline.TrySet(10).ShouldBeTrue();
        deadline.TryExpireIfPassed(10).ShouldBeTrue();

        deadline.TrySet(1_000).ShouldBeFalse();
        deadline.TrySet(ConnectionDeadline.None).ShouldBeFalse();
        deadline.IsExpired.ShouldBeTrue();
    }

    [Fact]
    public void A_deadline_that_never_passes_is_expired_only_by_a_stopping_server()
    {
        var deadline = new ConnectionDeadline();
        deadline.TrySet(ConnectionDeadline.NeverPasses).ShouldBeTrue();

        deadline.TryExpireIfPassed(ConnectionDeadline.NeverPasses - 1).ShouldBeFalse();
        deadline.TryExpireNow().ShouldBeTrue();
        deadline.IsExpired.ShouldBeTrue();
    }

    [Fact]
    public void Clearing_the_deadline_before_the_heartbeat_looks_wins_the_race()
    {
        var deadline = new ConnectionDeadline();
        deadline.TrySet(50).ShouldBeTrue();

        // The request head completed first: no deadline runs while it is handled, however late the tick.
        deadline.TrySet(ConnectionDeadline.None).ShouldBeTrue();
        deadline.TryExpireIfPassed(1_000).ShouldBeFalse();
        deadline.IsExpired.ShouldBeFalse();
    }

    [Fact]
    public async Task When_the_loop_and_the_heartbeat_race_exactly_one_side_wins_every_time()
    {
        for (int round = 0; round < 2_000; round++)
        {
            var deadline = new ConnectionDeadline();
            deadline.TrySet(10).ShouldBeTrue();
            using var start = new Barrier(2);
            Task<bool> expire = Task.Run(() =>
            {
                start.SignalAndWait();
                return deadline.TryExpireIfPassed(10);
            });
            start.SignalAndWait();
            bool cleared = deadline.TrySet(ConnectionDeadline.None);
            bool expired = await expire;

            (cleared ^ expired).ShouldBeTrue($"round {round}: cleared={cleared} expired={expired}");
            deadline.IsExpired.ShouldBe(expired);
        }
    }
}
