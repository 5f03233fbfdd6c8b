using System;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Timekeeping;
using Shouldly;

namespace Falconet.Http.Tests.Timekeeping;

/// <summary>The process's once-a-second thread: heartbeats on the system clock and the Date header tick there, not on the thread pool.</summary>
[Collection(nameof(SecondTickerCollection))]
public sealed class SecondTickerTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_subscriber_is_called_on_the_ticker_thread_until_it_unsubscribes()
    {
        var ticked = new TaskCompletionSource<(string? Name, bool PoolThread)>(TaskCreationOptions.RunContinuationsAsynchronously);
        Action tick = () => ticked.TrySetResult((Thread.CurrentThread.Name, Thread.CurrentThread.IsThreadPoolThread));
        SecondTicker.Subscribe(tick);
        try
        {
            (string? name, bool poolThread) = await ticked.Task.WaitAsync(TestTimeouts.Operation);
            name.ShouldBe("falconet-ticker");
            poolThread.ShouldBeFalse();
        }
        finally
        {
            SecondTicker.Unsubscribe(tick);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_subscriber_that_throws_does_not_stop_the_others()
    {
        int good = 0;
        Action failing = () => throw new InvalidOperationException("a failing subscriber");
        Action counting = () => Interlocked.Increment(ref good);
        SecondTicker.Subscribe(failing);
        SecondTicker.Subscribe(counting);
        try
        {
            while (Volatile.Read(ref good) < 2)
            {
                await Task.Delay(100);
            }
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
            while (names.IsEmpty)
            {
                await Task.Delay(100);
            }
        }
        finally
        {
            heartbeat.Dispose();
        }

        names.ShouldAllBe(name => name == "falconet-ticker");
        int count = names.Count;
        await Task.Delay(2500);
        names.Count.ShouldBeLessThanOrEqualTo(count + 1, "a tick already running may finish; no later one starts");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_Date_header_changes_second_by_second_while_a_server_holds_it()
    {
        DateHeaderValues.Acquire();
        try
        {
            string first = DateHeaderValues.Text;
            while (DateHeaderValues.Text == first)
            {
                await Task.Delay(100);
            }

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
