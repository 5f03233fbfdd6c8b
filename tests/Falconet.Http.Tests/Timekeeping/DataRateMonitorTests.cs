using System;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Timekeeping;

/// <summary>The minimum data rates, measured on a manual clock as the heartbeat sees them.</summary>
public sealed class DataRateMonitorTests
{
    private static readonly DataRateLimit HundredPerSecondAfterTwo = new(100, TimeSpan.FromSeconds(2), TimeSpan.TicksPerSecond);

    private static long Seconds(double seconds) => (long)(seconds * TimeSpan.TicksPerSecond);

    [Fact]
    public void A_body_below_the_rate_is_reported_only_once_the_grace_period_has_passed_and_only_once()
    {
        var clock = new ManualTimeProvider();
        var monitor = new DataRateMonitor(clock, HundredPerSecondAfterTwo, default);
        monitor.ResetBody();
        monitor.BodyWaitStarted();

        clock.Advance(TimeSpan.FromSeconds(2));
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.None);
        clock.Advance(TimeSpan.FromSeconds(1));
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.MinRequestBodyDataRate);
        monitor.Violation.ShouldBe(ConnectionCloseReason.MinRequestBodyDataRate);
        monitor.Check(clock.GetTimestamp() + Seconds(10)).ShouldBe(ConnectionCloseReason.None);
    }

    [Fact]
    public void A_body_that_keeps_above_the_rate_is_never_reported()
    {
        var clock = new ManualTimeProvider();
        var monitor = new DataRateMonitor(clock, HundredPerSecondAfterTwo, default);
        monitor.ResetBody();
        for (int second = 0; second < 30; second++)
        {
            monitor.BodyWaitStarted();
            clock.Advance(TimeSpan.FromSeconds(1));
            monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.None, $"second {second}, while waiting");

            // In bursts: while it waits for the next one, the time so far counts against the bytes so far.
            monitor.BodyWaitEnded(150);
        }

        monitor.Violation.ShouldBe(ConnectionCloseReason.None);
    }

    [Fact]
    public void Time_the_handler_spends_not_reading_does_not_count_against_the_client()
    {
        var clock = new ManualTimeProvider();
        var monitor = new DataRateMonitor(clock, HundredPerSecondAfterTwo, default);
        monitor.ResetBody();
        monitor.BodyWaitStarted();
        clock.Advance(TimeSpan.FromSeconds(1));
        monitor.BodyWaitEnded(100);

        // A minute in the handler, with no read pending: not checked, and not added to the time waited.
        clock.Advance(TimeSpan.FromMinutes(1));
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.None);

        monitor.BodyWaitStarted();
        clock.Advance(TimeSpan.FromSeconds(1));
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.None);
        clock.Advance(TimeSpan.FromSeconds(1));

        // 3 s waited for 100 bytes: below 100 B/s past the grace.
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.MinRequestBodyDataRate);
    }

    [Fact]
    public void Each_request_body_is_measured_from_zero()
    {
        var clock = new ManualTimeProvider();
        var monitor = new DataRateMonitor(clock, HundredPerSecondAfterTwo, default);
        monitor.ResetBody();
        monitor.BodyWaitStarted();
        clock.Advance(TimeSpan.FromSeconds(1.5));
        monitor.BodyWaitEnded(10);

        monitor.ResetBody();
        monitor.BodyWaitStarted();
        clock.Advance(TimeSpan.FromSeconds(1.5));
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.None);
    }

    [Fact]
    public void A_send_that_waits_longer_than_its_bytes_take_at_the_rate_is_reported()
    {
        var clock = new ManualTimeProvider();
        var monitor = new DataRateMonitor(clock, default, HundredPerSecondAfterTwo);

        // 1,000 bytes at 100 B/s may take 10 s.
        monitor.SendStarted(1_000);
        clock.Advance(TimeSpan.FromSeconds(10));
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.None);
        clock.Advance(TimeSpan.FromSeconds(1));
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.MinResponseDataRate);
    }

    [Fact]
    public void A_small_send_gets_the_grace_period_and_a_completed_send_is_not_checked()
    {
        var clock = new ManualTimeProvider();
        var monitor = new DataRateMonitor(clock, default, HundredPerSecondAfterTwo);
        monitor.SendStarted(10);
        clock.Advance(TimeSpan.FromSeconds(2));
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.None);
        monitor.SendEnded();

        clock.Advance(TimeSpan.FromHours(1));
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.None);

        monitor.SendStarted(10);
        clock.Advance(TimeSpan.FromSeconds(2.5));
        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.MinResponseDataRate);
    }

    [Fact]
    public void Without_minimum_rates_nothing_is_ever_reported()
    {
        var clock = new ManualTimeProvider();
        var monitor = new DataRateMonitor(clock, default, default);
        monitor.ResetBody();
        monitor.BodyWaitStarted();
        monitor.SendStarted(1_000_000);
        clock.Advance(TimeSpan.FromDays(1));

        monitor.Check(clock.GetTimestamp()).ShouldBe(ConnectionCloseReason.None);
    }

    [Fact]
    public void The_default_rates_are_240_bytes_a_second_after_5_seconds_and_invalid_rates_are_refused()
    {
        var options = new FalconetServerOptions();
        options.MinRequestBodyDataRate!.BytesPerSecond.ShouldBe(240);
        options.MinRequestBodyDataRate.GracePeriod.ShouldBe(TimeSpan.FromSeconds(5));
        options.MinResponseDataRate!.BytesPerSecond.ShouldBe(240);
        options.MinResponseDataRate.GracePeriod.ShouldBe(TimeSpan.FromSeconds(5));

        Should.Throw<ArgumentOutOfRangeException>(() => new MinDataRate(0, TimeSpan.Zero));
        Should.Throw<ArgumentOutOfRangeException>(() => new MinDataRate(double.NaN, TimeSpan.Zero));
        Should.Throw<ArgumentOutOfRangeException>(() => new MinDataRate(1, TimeSpan.FromSeconds(-1)));
    }
}
