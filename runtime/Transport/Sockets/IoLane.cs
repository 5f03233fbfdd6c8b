using System;
using System.Collections.Concurrent;
using System.Threading;
using Falconet.Buffers;

namespace Falconet.Transport.Sockets;

/// <summary>An I/O thread and its memory pool: socket completions of the lane's connections run their continuations here, so their rents and returns take the pool's owner fast path.</summary>
internal sealed class IoLane : IDisposable
{
    private readonly ConcurrentQueue<IThreadPoolWorkItem> _queue = new();
    private readonly object _gate = new();
    private readonly Thread _thread;
    private int _waiting;
    private volatile bool _stopping;
    private volatile bool _stopped;

    public IoLane(int index, bool trackLeaks)
    {
        _thread = new Thread(Run) { IsBackground = true, Name = $"falconet-io-{index}" };
        Pool = new SlabMemoryPool($"sockets-io-{index}", trackLeaks, _thread.ManagedThreadId) { OwnerScheduler = Schedule };
        _thread.UnsafeStart();
    }

    /// <summary>The pool owned by this lane's thread.</summary>
    public SlabMemoryPool Pool { get; }

    /// <summary>Runs <paramref name="item"/> on the lane thread (on the thread pool once the lane has stopped).</summary>
    public void Schedule(IThreadPoolWorkItem item)
    {
        _queue.Enqueue(item);

        // Publish the item before reading the flags; the lane thread publishes its flags before reading the queue.
        Interlocked.MemoryBarrier();
        if (_stopped)
        {
            DrainToThreadPool();
            return;
        }

        if (Volatile.Read(ref _waiting) != 0)
        {
            lock (_gate)
            {
                Monitor.Pulse(_gate);
            }
        }
    }

    /// <summary>Asks the thread to stop once it has run what is queued; later items run on the thread pool.</summary>
    public void BeginStop()
    {
        if (_stopping)
        {
            return;
        }

        _stopping = true;
        lock (_gate)
        {
            Monitor.PulseAll(_gate);
        }
    }

    /// <summary>True on the lane's thread.</summary>
    public bool IsLaneThread => Environment.CurrentManagedThreadId == _thread.ManagedThreadId;

    /// <summary>Stops the thread, waits at most <paramref name="timeout"/> for it to end, then disposes the pool.</summary>
    /// <remarks>
    /// A work item that blocks the lane (a handler that never returns) must not hang shutdown: the thread is a
    /// background thread, and the wait is bounded. Renting from the disposed pool then throws on that thread.
    /// </remarks>
    public void Stop(TimeSpan timeout)
    {
        BeginStop();
        if (Environment.CurrentManagedThreadId != _thread.ManagedThreadId)
        {
            _thread.Join(timeout);
        }

        Pool.Dispose();
    }

    /// <summary>Stops the thread (waiting at most a second for it) and disposes the pool.</summary>
    public void Dispose() => Stop(TimeSpan.FromSeconds(1));

    private void Run()
    {
        while (true)
        {
            while (_queue.TryDequeue(out IThreadPoolWorkItem? item))
            {
                item.Execute();
            }

            if (_stopping)
            {
                break;
            }

            lock (_gate)
            {
                Volatile.Write(ref _waiting, 1);
                Interlocked.MemoryBarrier();
                if (_queue.IsEmpty && !_stopping)
                {
                    Monitor.Wait(_gate);
                }

                Volatile.Write(ref _waiting, 0);
            }
        }

        _stopped = true;
        Interlocked.MemoryBarrier();
        DrainToThreadPool();
    }

    private void DrainToThreadPool()
    {
        while (_queue.TryDequeue(out IThreadPoolWorkItem? item))
        {
            ThreadPool.UnsafeQueueUserWorkItem(item, preferLocal: false);
        }
    }
}
