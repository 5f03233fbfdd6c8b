using System;
using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Timekeeping;
using Microsoft.Extensions.Logging;

namespace Falconet.Transport;

/// <summary>
/// A listener of a decorator that prepares each accepted connection before handing it out (the TLS decorator's handshakes,
/// the PROXY decorator's header reads): accepts from the inner listener, runs each connection's
/// <see cref="ConnectionPreparation"/> where the inner transport schedules the connection's code, and hands out only
/// connections whose preparation completed. Failed ones are closed, logged and counted by the preparation; whoever accepts
/// never sees them.
/// </summary>
/// <remarks>
/// <para>
/// Accepting is driven by <see cref="AcceptAsync"/>: it waits for whichever comes first, the inner listener's next
/// connection (its preparation starts, and the wait goes on) or a completed preparation (handed out). An inner accept's
/// failure (out of descriptors) reaches the caller, which backs off as it would for a plain listener.
/// </para>
/// <para>
/// Deadlines: one <see cref="Heartbeat"/> per listener checks every running preparation against its deadline; no timer per
/// connection. A passed one stops the connection's receiving, so the preparation fails at once and closes with a FIN.
/// </para>
/// <para>
/// Limits: with an <see cref="IConnectionAdmission"/>, each preparation takes a place of the acceptor's connection limit
/// from its accept until it is handed out or closed, so preparations in progress count against that limit.
/// </para>
/// <para>
/// Unbinding: no connection is lost between this listener and its acceptor. Completed preparations not yet handed out,
/// preparations still running and those that complete afterwards are closed here (reason <c>server_stopping</c>); the
/// unbind returns once every one of them ended (running ones are aborted after <see cref="StopGrace"/>).
/// </para>
/// </remarks>
internal abstract class PreparingListener<TPreparation> : IConnectionListener
    where TPreparation : ConnectionPreparation
{
    /// <summary>How long unbinding waits for stopped preparations to end before it aborts them, and then again.</summary>
    internal static readonly TimeSpan StopGrace = TimeSpan.FromSeconds(1);

    private readonly IConnectionListener _inner;
    private readonly IConnectionAdmission? _admission;
    private readonly Heartbeat _heartbeat;
    private readonly Lock _gate = new();
    private readonly HashSet<TPreparation> _running = new();
    private readonly Queue<TPreparation> _completed = new();
    private TaskCompletionSource? _handedOver;
    private TaskCompletionSource? _allEnded;
    private Task<TransportConnection?>? _innerAccept;
    private bool _innerEnded;
    private bool _unbound;
    private Task? _unbind;

    protected PreparingListener(IConnectionListener inner, ListenerContext context)
    {
        _inner = inner;
        _admission = context.Admission;
        Clock = context.Clock;
        Logger = context.Logger;
        _heartbeat = new Heartbeat(context.Clock, context.HeartbeatInterval, OnHeartbeat);
    }

    public EndPoint EndPoint => _inner.EndPoint;

    public TimeProvider Clock { get; }

    public ILogger Logger { get; }

    /// <summary>Preparations running now, and completed ones not handed out yet.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _running.Count + _completed.Count;
            }
        }
    }

    /// <summary>True once unbinding began: no preparation is handed out anymore.</summary>
    public bool IsUnbound => Volatile.Read(ref _unbound);

    /// <summary>The next connection whose preparation completed; null once the listener is unbound.</summary>
    /// <remarks>One call at a time, as an accept loop makes them.</remarks>
    public async ValueTask<TransportConnection?> AcceptAsync(CancellationToken ct = default)
    {
        while (true)
        {
            Task handedOver;
            lock (_gate)
            {
                if (!_unbound && _completed.TryDequeue(out TPreparation? completed))
                {
                    // The acceptor takes a place of its own for the connection.
                    _admission?.Release();
                    return completed.Connection;
                }

                if ((_unbound && _innerAccept is null) || _innerEnded)
                {
                    return null;
                }

                if (_handedOver is null || _handedOver.Task.IsCompleted)
                {
                    _handedOver = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                }

                handedOver = _handedOver.Task;
            }

            // An inner accept outlives the call that started it: a completed preparation may end this call first.
            _innerAccept ??= _inner.AcceptAsync(CancellationToken.None).AsTask();
            if (!_innerAccept.IsCompleted)
            {
                await Task.WhenAny(_innerAccept, handedOver).WaitAsync(ct).ConfigureAwait(false);
            }

            if (!_innerAccept.IsCompleted)
            {
                continue;
            }

            Task<TransportConnection?> innerAccept = _innerAccept;
            _innerAccept = null;
            TransportConnection? accepted = await innerAccept.ConfigureAwait(false);
            if (accepted is null)
            {
                lock (_gate)
                {
                    _innerEnded = true;
                }

                continue;
            }

            Start(accepted);
        }
    }

    /// <summary>Makes the preparation of an accepted connection (started once it is registered).</summary>
    protected abstract TPreparation Create(TransportConnection accepted, long now);

    /// <summary>Logs that unbinding aborted <paramref name="count"/> preparations that did not end when stopped.</summary>
    protected abstract void LogAborted(int count);

    /// <summary>Starts the preparation of an accepted connection where its transport schedules the connection's code.</summary>
    private void Start(TransportConnection accepted)
    {
        // Before the preparation's objects are made, so a flood past the limit costs an accept and a close.
        if (_admission is not null && !_admission.TryAdmit(accepted))
        {
            return;
        }

        TPreparation preparation = Create(accepted, Clock.GetTimestamp());
        lock (_gate)
        {
            _running.Add(preparation);
            if (_unbound)
            {
                preparation.Stop();
            }
        }

        accepted.Schedule(preparation);
    }

    /// <summary>Ends the preparations whose deadline passed (the heartbeat's tick).</summary>
    private void OnHeartbeat(long now)
    {
        lock (_gate)
        {
            foreach (TPreparation preparation in _running)
            {
                if (now >= preparation.Deadline)
                {
                    preparation.Expire();
                }
            }
        }
    }

    /// <summary>
    /// A completed preparation waits for <see cref="AcceptAsync"/>, queued in the same step in which it leaves the running
    /// ones, so an unbinding listener sees it in one or the other. False when the listener is unbound or the deadline
    /// passed first: the preparation then closes its connection.
    /// </summary>
    public bool TryHandOut(TPreparation preparation)
    {
        lock (_gate)
        {
            if (_unbound || preparation.IsTimedOut)
            {
                return false;
            }

            _running.Remove(preparation);
            preparation.IsHandedOut = true;
            _completed.Enqueue(preparation);
            _handedOver?.TrySetResult();
            return true;
        }
    }

    /// <summary>A preparation closed its connection: its place of the limit is free again.</summary>
    public void Ended(TPreparation preparation)
    {
        lock (_gate)
        {
            if (_running.Remove(preparation) && _running.Count == 0)
            {
                _allEnded?.TrySetResult();
            }
        }

        _admission?.Release();
    }

    /// <summary>
    /// Stops accepting; closes completed preparations not handed out, stops the running ones (receiving stops, so each fails
    /// at once and closes with a FIN) and waits for them; after <see cref="StopGrace"/> the rest are aborted and waited for once more.
    /// </summary>
    public ValueTask UnbindAsync()
    {
        lock (_gate)
        {
            _unbind ??= UnbindCoreAsync();
            return new ValueTask(_unbind);
        }
    }

    private async Task UnbindCoreAsync()
    {
        TPreparation[] running;
        Task allEnded;
        lock (_gate)
        {
            _unbound = true;
            _handedOver?.TrySetResult();

            // Completed ones go back among the running: they close below, and the wait covers them.
            while (_completed.TryDequeue(out TPreparation? completed))
            {
                _running.Add(completed);
            }

            _allEnded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            if (_running.Count == 0)
            {
                _allEnded.TrySetResult();
            }

            running = new TPreparation[_running.Count];
            _running.CopyTo(running);
            allEnded = _allEnded.Task;
        }

        await _inner.UnbindAsync().ConfigureAwait(false);
        foreach (TPreparation preparation in running)
        {
            preparation.StopOrClose();
        }

        try
        {
            await allEnded.WaitAsync(StopGrace, TimeProvider.System).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            LogAborted(Count);
            foreach (TPreparation preparation in running)
            {
                preparation.Abort();
            }

            // Aborted connections end at once; one that still does not is left to the transport's disposal.
            await Task.WhenAny(allEnded, Task.Delay(StopGrace, TimeProvider.System)).ConfigureAwait(false);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await UnbindAsync().ConfigureAwait(false);
        _heartbeat.Dispose();
        await _inner.DisposeAsync().ConfigureAwait(false);
    }
}

/// <summary>What every listener of a decorator shares: the clock and heartbeat period of its deadlines, its logger and the acceptor's limit.</summary>
internal sealed record ListenerContext(TimeProvider Clock, TimeSpan HeartbeatInterval, ILogger Logger, IConnectionAdmission? Admission);
