using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading;
using Falconet.Buffers;
using Microsoft.Extensions.Logging;

namespace Falconet.Transport;

/// <summary>
/// An event loop on its own thread with the memory pool that thread owns, as the libuv and io_uring transports run them:
/// the queue other threads hand work to, the pool, the counts of connections, and the stop. How a loop waits, and how
/// a post wakes it, is the transport's own (<see cref="Wake"/>).
/// </summary>
internal abstract class TransportLoop
{
    private readonly ConcurrentQueue<IThreadPoolWorkItem> _queue = new();
    private readonly ManualResetEventSlim _exited = new(false);
    private readonly Thread _thread;

    /// <summary>Creates the loop's thread (not started: see <see cref="StartThread"/>) and the pool it owns.</summary>
    protected TransportLoop(int index, string threadName, string poolName, bool trackLeaks, ILogger logger)
    {
        Index = index;
        Logger = logger;
        _thread = new Thread(Run) { IsBackground = true, Name = threadName };
        Pool = new SlabMemoryPool(poolName, trackLeaks, _thread.ManagedThreadId) { OwnerScheduler = Post };
    }

    /// <summary>The loop's position among the transport's loops.</summary>
    public int Index { get; }

    /// <summary>The pool owned by the loop thread.</summary>
    public SlabMemoryPool Pool { get; }

    /// <summary>The logger for failures that have no caller to throw to.</summary>
    public ILogger Logger { get; }

    /// <summary>True once the loop thread has ended.</summary>
    public bool HasExited => _exited.IsSet;

    /// <summary>True on the loop thread.</summary>
    public bool IsLoopThread => Environment.CurrentManagedThreadId == _thread.ManagedThreadId;

    /// <summary>Connections opened on this loop and not yet closed (diagnostics: the spread over loops).</summary>
    public int OpenConnections;

    /// <summary>Connections accepted on this loop since it started (diagnostics: the spread over loops).</summary>
    public long AcceptedConnections;

    /// <summary>True when work is queued for the loop.</summary>
    protected bool HasQueuedWork => !_queue.IsEmpty;

    /// <summary>Runs <paramref name="item"/> on the loop thread (on the thread pool once the loop has stopped).</summary>
    public void Post(IThreadPoolWorkItem item)
    {
        _queue.Enqueue(item);
        Wake();
    }

    /// <summary>Closes everything the loop still has (connections are reset), lets it finish, and waits at most <paramref name="timeout"/> for its thread.</summary>
    public bool Stop(TimeSpan timeout)
    {
        Post(new StopWorkItem(this));
        bool exited = IsLoopThread || _exited.Wait(timeout);
        if (exited)
        {
            Pool.Dispose();
        }

        return exited;
    }

    /// <summary>Starts the loop thread.</summary>
    protected void StartThread() => _thread.UnsafeStart();

    /// <summary>Runs the loop until it stops; called on the loop thread.</summary>
    protected abstract void RunLoop();

    /// <summary>Makes the loop look at its queue soon; called after every post, on any thread.</summary>
    protected abstract void Wake();

    /// <summary>On the loop thread: starts the stop (closes every handle; the loop ends once they are closed).</summary>
    protected abstract void BeginStopOnLoop();

    /// <summary>Logs a work item that threw (the loop goes on).</summary>
    protected abstract void OnWorkItemFailed(Exception exception);

    /// <summary>Runs every queued work item; one that throws is logged and does not take the loop down.</summary>
    protected void RunQueued()
    {
        while (_queue.TryDequeue(out IThreadPoolWorkItem? item))
        {
            try
            {
                item.Execute();
            }
            catch (Exception exception)
            {
                // The connection it belonged to times out or closes.
                OnWorkItemFailed(exception);
            }
        }
    }

    /// <summary>Hands every queued work item to the thread pool (the loop cannot run them anymore).</summary>
    protected void DrainToThreadPool()
    {
        while (_queue.TryDequeue(out IThreadPoolWorkItem? item))
        {
            ThreadPool.UnsafeQueueUserWorkItem(item, preferLocal: false);
        }
    }

    private void Run()
    {
        try
        {
            RunLoop();
        }
        finally
        {
            _exited.Set();
            DrainToThreadPool();
        }
    }

    private sealed class StopWorkItem(TransportLoop loop) : IThreadPoolWorkItem
    {
        public void Execute()
        {
            if (loop.IsLoopThread)
            {
                loop.BeginStopOnLoop();
            }
        }
    }
}

/// <summary>What a transport with loops reports over all of them, and its stop.</summary>
internal static class TransportLoops
{
    /// <summary>Connections accepted by each loop since start (the spread over loops).</summary>
    public static IReadOnlyList<long> AcceptedPerLoop(TransportLoop[] loops)
    {
        var counts = new long[loops.Length];
        for (int i = 0; i < counts.Length; i++)
        {
            counts[i] = Interlocked.Read(ref loops[i].AcceptedConnections);
        }

        return counts;
    }

    /// <summary>Connections of every loop not closed yet, including those accepted but not handed out.</summary>
    public static int OpenConnections(TransportLoop[] loops)
    {
        int open = 0;
        foreach (TransportLoop loop in loops)
        {
            open += Volatile.Read(ref loop.OpenConnections);
        }

        return open;
    }

    /// <summary>Loop threads that have not ended yet (0 after a stop that joined them all).</summary>
    public static int Running(TransportLoop[] loops)
    {
        int running = 0;
        foreach (TransportLoop loop in loops)
        {
            running += loop.HasExited ? 0 : 1;
        }

        return running;
    }

    /// <summary>Stops every loop that was made (a failed start leaves nulls), waiting at most <paramref name="timeout"/> in total.</summary>
    public static void Stop(TransportLoop?[] loops, TimeSpan timeout)
    {
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        foreach (TransportLoop? loop in loops)
        {
            loop?.Stop(TimeSpan.FromMilliseconds(Math.Max(0, deadline - Environment.TickCount64)));
        }
    }
}
