using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;

namespace Falconet.Server;

/// <summary>
/// Puts every thread of the process under <c>SCHED_BATCH</c> while at least one server holds it, and back to
/// <c>SCHED_OTHER</c> when the last one lets go (<see cref="BatchScheduling"/>).
/// </summary>
/// <remarks>
/// The listing of <c>/proc/self/task</c> is repeated until a pass finds no thread left to change, which covers threads
/// started meanwhile. A thread started later does not reliably inherit the policy: glibc gives a thread started by any
/// thread but the main one the policy its creator had when the creator itself started (measured: a thread started by a
/// changed thread-pool worker runs under SCHED_OTHER). So each holder calls <see cref="Refresh"/> on its heartbeat, and
/// a thread started while the policy is held gets it within a second. Only <c>SCHED_OTHER</c> threads are changed, and
/// only those are changed back: a thread the application put under another policy, <c>SCHED_BATCH</c> included, keeps it.
/// </remarks>
internal static partial class BatchPolicy
{
    private const int SchedOther = 0;
    private const int SchedBatch = 3;
    private const int MaxPasses = 8;

    private static readonly object s_gate = new();
    private static readonly HashSet<int> s_batchBefore = new();
    private static int s_holders;
    private static long s_lastRefresh;

    /// <summary>The shortest time between two <see cref="Refresh"/> passes, however many servers call it.</summary>
    internal static long RefreshMilliseconds { get; set; } = 1000;

    /// <summary>For tests: when set, <see cref="Enter"/> fails with this reason as if the kernel had refused the policy.</summary>
    internal static string? SimulatedRefusal { get; set; }

    /// <summary>Servers that hold the policy now.</summary>
    internal static int Holders
    {
        get
        {
            lock (s_gate)
            {
                return s_holders;
            }
        }
    }

    /// <summary>Takes the policy for one holder; null on success, otherwise why it cannot be set (nothing is changed then).</summary>
    public static string? Enter()
    {
        if (!OperatingSystem.IsLinux())
        {
            return "SCHED_BATCH is a Linux scheduling policy";
        }

        lock (s_gate)
        {
            if (s_holders > 0)
            {
                s_holders++;
                return null;
            }

            if (SimulatedRefusal is { } refusal)
            {
                return refusal;
            }

            // The application's own batch threads first, so that neither a refusal below nor the last Exit takes it from them.
            s_batchBefore.Clear();
            foreach (int tid in Threads())
            {
                if (GetScheduler(tid) == SchedBatch)
                {
                    s_batchBefore.Add(tid);
                }
            }

            string? failure = null;
            ChangeUntilSettled(SchedOther, SchedBatch, ref failure);
            if (failure is not null)
            {
                ChangeBack();
                return failure;
            }

            s_holders = 1;
            return null;
        }
    }

    /// <summary>While the policy is held, puts threads started since the last pass under it (one pass, at most once a second).</summary>
    public static void Refresh()
    {
        lock (s_gate)
        {
            long now = Environment.TickCount64;
            if (s_holders == 0 || now - s_lastRefresh < RefreshMilliseconds)
            {
                return;
            }

            s_lastRefresh = now;

            // A refusal now (a filter installed since the start) leaves the thread as it is; the start already reported on the policy.
            string? refused = null;
            ChangeAll(SchedOther, SchedBatch, ref refused);
        }
    }

    /// <summary>Lets go of the policy for one holder; the last one puts the threads it changed back under <c>SCHED_OTHER</c>.</summary>
    public static void Exit()
    {
        lock (s_gate)
        {
            if (s_holders == 0 || --s_holders > 0)
            {
                return;
            }

            ChangeBack();
        }
    }

    /// <summary>The policy of thread <paramref name="threadId"/> (0: the calling thread): 0 SCHED_OTHER, 3 SCHED_BATCH, and so on; -1 when it cannot be read.</summary>
    internal static int PolicyOf(int threadId) => OperatingSystem.IsLinux() ? GetScheduler(threadId) : -1;

    /// <summary>Every thread this class put under SCHED_BATCH, and every thread they started, back to SCHED_OTHER.</summary>
    private static void ChangeBack()
    {
        string? refused = null;
        ChangeUntilSettled(SchedBatch, SchedOther, ref refused);
    }

    /// <summary>Passes of <see cref="ChangeAll"/> until one changes nothing (threads started meanwhile are caught by the next), a refusal, or <see cref="MaxPasses"/>.</summary>
    private static void ChangeUntilSettled(int from, int to, ref string? failure)
    {
        int pass = 0;
        while (pass++ < MaxPasses && ChangeAll(from, to, ref failure))
        {
        }
    }

    /// <summary>
    /// One pass over the process's threads: those under <paramref name="from"/> go to <paramref name="to"/>, except, going back,
    /// those that were batch before; true when any changed. A refusal stops the pass and is kept in <paramref name="failure"/>.
    /// </summary>
    private static bool ChangeAll(int from, int to, ref string? failure)
    {
        bool changed = false;
        foreach (int tid in Threads())
        {
            int policy = GetScheduler(tid);
            if (policy != from || (from == SchedBatch && s_batchBefore.Contains(tid)))
            {
                continue;
            }

            int priority = 0;
            if (SetScheduler(tid, to, ref priority) == 0)
            {
                changed = true;
                continue;
            }

            int errno = Marshal.GetLastPInvokeError();
            if (errno != 3)
            {
                // ESRCH (3): the thread ended meanwhile. Anything else is the kernel (or a seccomp filter) saying no.
                failure ??= $"sched_setscheduler refused SCHED_{(to == SchedBatch ? "BATCH" : "OTHER")} for thread {tid}: {Marshal.GetPInvokeErrorMessage(errno)} (errno {errno})";
                return false;
            }
        }

        return changed;
    }

    /// <summary>The ids of the process's threads now.</summary>
    private static IEnumerable<int> Threads()
    {
        foreach (string entry in Directory.EnumerateDirectories("/proc/self/task"))
        {
            if (int.TryParse(Path.GetFileName(entry), NumberStyles.None, CultureInfo.InvariantCulture, out int tid))
            {
                yield return tid;
            }
        }
    }

    [LibraryImport("libc", EntryPoint = "sched_getscheduler", SetLastError = true)]
    private static partial int GetScheduler(int threadId);

    [LibraryImport("libc", EntryPoint = "sched_setscheduler", SetLastError = true)]
    private static partial int SetScheduler(int threadId, int policy, ref int priority);
}
