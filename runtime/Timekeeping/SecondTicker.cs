using System;
using System.Threading;

namespace Falconet.Timekeeping;

/// <summary>
/// One background thread per process that ticks once a second for every running server: it refreshes the Date header
/// and runs the servers' heartbeats. A timer of the thread pool would wake a pool thread for each of them every second,
/// and a woken worker spins (sched_yield) before it sleeps again, on the very cores the event loops serve requests on
/// (seen as 4 % of the samples of a server pinned to one core); this thread sleeps in between and wakes nobody.
/// </summary>
internal static class SecondTicker
{
    /// <summary>The tick period.</summary>
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    private static readonly Lock s_gate = new();
    private static Action[] s_subscribers = [];
    private static ManualResetEvent? s_stop;

    /// <summary>Runs <paramref name="tick"/> once a second, on the ticker thread, until <see cref="Unsubscribe"/>.</summary>
    public static void Subscribe(Action tick)
    {
        ArgumentNullException.ThrowIfNull(tick);
        lock (s_gate)
        {
            Action[] subscribers = new Action[s_subscribers.Length + 1];
            s_subscribers.CopyTo(subscribers, 0);
            subscribers[^1] = tick;
            Volatile.Write(ref s_subscribers, subscribers);
            if (s_stop is null)
            {
                // Each thread has its own stop signal, so one that is ending never takes a newer one's subscribers.
                var stop = new ManualResetEvent(false);
                s_stop = stop;
                new Thread(() => Run(stop)) { IsBackground = true, Name = "falconet-ticker" }.UnsafeStart();
            }
        }
    }

    /// <summary>Stops running <paramref name="tick"/>; the thread ends with the last subscriber. A tick already running finishes.</summary>
    public static void Unsubscribe(Action tick)
    {
        lock (s_gate)
        {
            int index = Array.IndexOf(s_subscribers, tick);
            if (index < 0)
            {
                return;
            }

            Action[] subscribers = new Action[s_subscribers.Length - 1];
            Array.Copy(s_subscribers, 0, subscribers, 0, index);
            Array.Copy(s_subscribers, index + 1, subscribers, index, subscribers.Length - index);
            Volatile.Write(ref s_subscribers, subscribers);
            if (subscribers.Length == 0 && s_stop is { } stop)
            {
                s_stop = null;
                stop.Set();
            }
        }
    }

    private static void Run(ManualResetEvent stop)
    {
        using (stop)
        {
            while (!stop.WaitOne(Interval))
            {
                foreach (Action tick in Volatile.Read(ref s_subscribers))
                {
                    try
                    {
                        tick();
                    }
                    catch (Exception)
                    {
                        // One subscriber's failure must not stop the others' ticks; each one logs its own failures.
                    }
                }
            }
        }
    }
}
