using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;
using Falconet.Buffers;
using Microsoft.Extensions.Logging;

namespace Falconet.Transport.Libuv;

/// <summary>
/// One libuv event loop on its own thread, with the memory pool that thread owns. Every libuv call for the loop's
/// handles is made on this thread; other threads hand work to it through a queue and <c>uv_async_send</c>.
/// </summary>
internal sealed unsafe class LibuvLoop
{
    private readonly ConcurrentQueue<IThreadPoolWorkItem> _queue = new();
    private readonly object _asyncGate = new();
    private readonly Thread _thread;
    private readonly ILogger _logger;
    private readonly ManualResetEventSlim _exited = new(false);
    private GCHandle _self;
    private void* _loop;
    private void* _async;
    private bool _asyncClosed;
    private bool _stopping;

    public LibuvLoop(int index, bool trackLeaks, ILogger logger)
    {
        Index = index;
        _logger = logger;
        _loop = NativeMemory.AllocZeroed(LibuvNative.LoopSize());
        _async = NativeMemory.AllocZeroed(LibuvNative.HandleSize(LibuvNative.HandleTypeAsync));
        try
        {
            LibuvNative.Check(LibuvNative.LoopInit(_loop), "uv_loop_init");
        }
        catch
        {
            NativeMemory.Free(_loop);
            NativeMemory.Free(_async);
            throw;
        }

        _self = GCHandle.Alloc(this);
        LibuvNative.SetData(_async, GCHandle.ToIntPtr(_self));

        // Before the loop runs, this thread may touch it; afterwards only the loop thread does.
        LibuvNative.Check(LibuvNative.AsyncInit(_loop, _async, &OnAsync), "uv_async_init");
        _thread = new Thread(Run) { IsBackground = true, Name = $"falconet-uv-{index}" };
        Pool = new SlabMemoryPool($"libuv-{index}", trackLeaks, _thread.ManagedThreadId) { OwnerScheduler = Post };
        _thread.UnsafeStart();
    }

    /// <summary>The loop's position among the transport's loops.</summary>
    public int Index { get; }

    /// <summary>The pool owned by the loop thread.</summary>
    public SlabMemoryPool Pool { get; }

    /// <summary>The native <c>uv_loop_t</c>.</summary>
    public void* Handle => _loop;

    /// <summary>The logger for failures that have no caller to throw to.</summary>
    public ILogger Logger => _logger;

    /// <summary>True once the loop thread has ended.</summary>
    public bool HasExited => _exited.IsSet;

    /// <summary>True on the loop thread.</summary>
    public bool IsLoopThread => Environment.CurrentManagedThreadId == _thread.ManagedThreadId;

    /// <summary>Connections opened on this loop and not yet closed (diagnostics: the spread over loops).</summary>
    public int OpenConnections;

    /// <summary>Connections accepted on this loop since it started (diagnostics: the spread over loops).</summary>
    public long AcceptedConnections;

    /// <summary>Runs <paramref name="item"/> on the loop thread (on the thread pool once the loop has stopped).</summary>
    public void Post(IThreadPoolWorkItem item)
    {
        _queue.Enqueue(item);

        // The handle is closed and freed by the loop thread at stop, under the same lock.
        lock (_asyncGate)
        {
            if (!_asyncClosed)
            {
                LibuvNative.AsyncSend(_async);
                return;
            }
        }

        DrainToThreadPool();
    }

    /// <summary>Closes every handle of the loop (connections still open are reset), lets it run out, and waits at most <paramref name="timeout"/> for its thread.</summary>
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

    private void Run()
    {
        try
        {
            int result = LibuvNative.Run(_loop, LibuvNative.RunDefault);
            if (result < 0)
            {
                LibuvLog.LoopFailed(_logger, Index, new LibuvException("uv_run", result));
            }

            // Every handle is closed: the loop has nothing left and can be freed.
            int closed = LibuvNative.LoopClose(_loop);
            if (closed < 0)
            {
                LibuvLog.LoopFailed(_logger, Index, new LibuvException("uv_loop_close", closed));
            }
            else
            {
                NativeMemory.Free(_loop);
                _loop = null;
            }
        }
        finally
        {
            _exited.Set();
            DrainToThreadPool();
        }
    }

    private void RunQueued()
    {
        while (_queue.TryDequeue(out IThreadPoolWorkItem? item))
        {
            try
            {
                item.Execute();
            }
            catch (Exception exception)
            {
                // A work item must not take the loop down with it; the connection it belonged to times out or closes.
                LibuvLog.WorkItemFailed(_logger, Index, exception);
            }
        }
    }

    private void BeginStopOnLoop()
    {
        if (_stopping)
        {
            return;
        }

        _stopping = true;
        LibuvNative.Walk(_loop, &OnWalkClose, null);
    }

    private void DrainToThreadPool()
    {
        while (_queue.TryDequeue(out IThreadPoolWorkItem? item))
        {
            ThreadPool.UnsafeQueueUserWorkItem(item, preferLocal: false);
        }
    }

    private static LibuvLoop FromHandle(void* handle) => (LibuvLoop)GCHandle.FromIntPtr(LibuvNative.GetData(handle)).Target!;

    [UnmanagedCallersOnly]
    private static void OnAsync(void* handle)
    {
        FromHandle(handle).RunQueued();
    }

    [UnmanagedCallersOnly]
    private static void OnWalkClose(void* handle, void* argument)
    {
        try
        {
            if (LibuvNative.IsClosing(handle) != 0)
            {
                return;
            }

            object? owner = GCHandle.FromIntPtr(LibuvNative.GetData(handle)).Target;
            switch (owner)
            {
                case LibuvConnection connection:
                    connection.CloseOnLoop(reset: true);
                    break;
                case LibuvListenSocket listener:
                    listener.CloseOnLoop();
                    break;
                case LibuvLoop loop:
                    loop.CloseAsyncHandle();
                    break;
            }
        }
        catch (Exception exception)
        {
            Environment.FailFast("A libuv handle could not be closed at stop.", exception);
        }
    }

    private void CloseAsyncHandle()
    {
        lock (_asyncGate)
        {
            _asyncClosed = true;
        }

        // Work queued before the flag was set still runs: nothing else will wake the loop for it.
        RunQueued();
        LibuvNative.Close(_async, &OnAsyncClosed);
    }

    [UnmanagedCallersOnly]
    private static void OnAsyncClosed(void* handle)
    {
        LibuvLoop loop = FromHandle(handle);
        loop._self.Free();
        NativeMemory.Free(handle);
        loop._async = null;
    }

    private sealed class StopWorkItem(LibuvLoop loop) : IThreadPoolWorkItem
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

/// <summary>Log messages of the libuv transport.</summary>
internal static partial class LibuvLog
{
    [LoggerMessage(EventId = 300, Level = LogLevel.Error, Message = "libuv loop {Loop} failed.")]
    public static partial void LoopFailed(ILogger logger, int loop, Exception exception);

    [LoggerMessage(EventId = 301, Level = LogLevel.Error, Message = "A work item on libuv loop {Loop} threw.")]
    public static partial void WorkItemFailed(ILogger logger, int loop, Exception exception);

    [LoggerMessage(EventId = 302, Level = LogLevel.Warning, Message = "Accepting a connection on libuv loop {Loop} failed: {ErrorName} ({ErrorText}).")]
    public static partial void AcceptFailed(ILogger logger, int loop, string errorName, string errorText);

    [LoggerMessage(EventId = 303, Level = LogLevel.Error, Message = "A libuv callback on loop {Loop} threw.")]
    public static partial void CallbackFailed(ILogger logger, int loop, Exception exception);

    [LoggerMessage(EventId = 304, Level = LogLevel.Debug, Message = "libuv {Version} loaded; {Loops} loops, connections spread by {Distribution}.")]
    public static partial void Started(ILogger logger, string version, int loops, LibuvDistribution distribution);
}
