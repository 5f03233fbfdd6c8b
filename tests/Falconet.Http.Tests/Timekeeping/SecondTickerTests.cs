using System;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Timekeeping;
using Shouldly;

namespace Falconet.Http.Tests.Timekeeping;

/// <summary>The process's once-a-second thread: heartbeats on the system clock and the Date header tick there, not on the thread pool.</summary>
[Collection(nameof(SecondTickerCollection))]
public sealed class SecondTickerTests
{
    /// <summary>Longer than two ticks: a subscriber that is still subscribed has been called again by then.</summary>
    private static readonly TimeSpan TwoTicksAndAHalf = TimeSpan.FromMilliseconds(2500);

    /// <summary>Polls <paramref name="condition"/> until it holds or <see cref="TestTimeouts.Operation"/> passed; returns whether it held.</summary>
    private static async Task<bool> WaitUntilAsync(Func<bool> condition)
    {
        long deadline = Environment.TickCount64 + (long)TestTimeouts.Operation.TotalMilliseconds;
        while (!condition())
        {
            if (Environment.TickCount64 > deadline)
            {
                return false;
            }

            await Task.Delay(100);
        }

        return true;
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_subscriber_is_called_on_the_ticker_thread_until_it_unsubscribes()
    {
        var threads = new System.Collections.Concurrent.ConcurrentQueue<(string? Name, bool PoolThread)>();
        Action tick = () => threads.Enqueue((Thread.CurrentThread.Name, Thread.CurrentThread.IsThreadPoolThread));
        SecondTicker.Subscribe(tick);
        try
        {
            (await WaitUntilAsync(() => !threads.IsEmpty)).ShouldBeTrue("the subscriber was never called");
        }
        finally
        {
            SecondTicker.Unsubscribe(tick);
        }

        threads.ShouldAllBe(thread => thread.Name == "falconet-ticker" && !thread.PoolThread);
        int calls = threads.Count;
        await Task.Delay(TwoTicksAndAHalf);
        threads.Count.ShouldBeLessThanOrEqualTo(calls + 1, "a tick already running may finish; no later one calls it");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_subscriber_that_throws_does_not_stop_the_others()
    {
        int failures = 0;
        int good = 0;
        Action failing = () =>
        {
            Interlocked.Increment(ref failures);
            throw new InvalidOperationException("a failing subscriber");
        };
        Action counting = () => Interlocked.Increment(ref good);
        SecondTicker.Subscribe(failing);
        SecondTicker.Subscribe(counting);
        try
        {
            // Two ticks of the good one after the failing one threw at least once: the throw stopped neither the thread nor it.
            (await WaitUntilAsync(() => Volatile.Read(ref failures) >= 2 && Volatile.Read(ref good) >= 2)).ShouldBeTrue(
                $"after {TestTimeouts.Operation}: the failing subscriber was called {failures} times, the other {good} times");
        }
        finally
        {
            SecondTicker.Unsubscribe(failing);
            SecondTicker.Unsubscribe(counting);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_heartbeat_on_the_system_clock_ticks_on_the_ticker_thread_and_stops_when_disposed()
    {
        var names = new System.Collections.Concurrent.ConcurrentQueue<string?>();
        var heartbeat = new Heartbeat(TimeProvider.System, SecondTicker.Interval, _ => names.Enqueue(Thread.CurrentThread.Name));
        try
        {
            (await WaitUntilAsync(() => !names.IsEmpty)).ShouldBeTrue("the heartbeat never ticked");
        }
        finally
        {
            heartbeat.Dispose();
        }

        names.ShouldAllBe(name => name == "falconet-ticker");
        int count = names.Count;
        await Task.Delay(TwoTicksAndAHalf);
        names.Count.ShouldBeLessThanOrEqualTo(count + 1, "a tick already running may finish; no later one starts");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_Date_header_changes_second_by_second_while_a_server_holds_it()
    {
        DateHeaderValues.Acquire();
        try
        {
            string first = DateHeaderValues.Text;
            (await WaitUntilAsync(() => DateHeaderValues.Text != first)).ShouldBeTrue($"the Date value stayed {first}");

            DateTimeOffset.Parse(DateHeaderValues.Text, System.Globalization.CultureInfo.InvariantCulture)
                .ShouldBe(DateTimeOffset.UtcNow, TimeSpan.FromSeconds(3));
        }
        finally
        {
            DateHeaderValues.Release();
        }
    }
}

/// <summary>The ticker is process-wide: its tests do not run beside each other.</summary>
[CollectionDefinition(nameof(SecondTickerCollection), DisableParallelization = true)]
public sealed class SecondTickerCollection
{
}
