using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Http.Http1;
using Falconet.Transport;
using Falconet.Transport.Tls;
using Microsoft.Extensions.Logging;

namespace Falconet.Transport.Tls;

/// <summary>
/// The TLS handshakes a server is running: started at accept, checked by the heartbeat against their deadlines, handed
/// over to HTTP when they complete, and ended when the server stops.
/// </summary>
internal sealed class TlsHandshakes
{
    private readonly HashSet<TlsHandshake> _running = new();
    private readonly Lock _gate = new();
    private readonly Func<TransportConnection, HttpConnection?> _startConnection;
    private TaskCompletionSource? _allEnded;
    private volatile bool _stopping;

    /// <summary>
    /// <paramref name="startConnection"/> registers an HTTP connection with the server (under this object's lock); null when
    /// the server's connection limit is reached.
    /// </summary>
    public TlsHandshakes(Func<TransportConnection, HttpConnection?> startConnection, TimeProvider clock, ILogger logger)
    {
        _startConnection = startConnection;
        Clock = clock;
        Logger = logger;
    }

    public TimeProvider Clock { get; }

    public ILogger Logger { get; }

    /// <summary>Handshakes running now.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _running.Count;
            }
        }
    }

    /// <summary>Starts the handshake of a connection accepted on an HTTPS endpoint where the transport schedules the connection's code.</summary>
    public void Start(TransportConnection accepted, TlsServerSettings settings)
    {
        var handshake = new TlsHandshake(this, accepted, settings, Clock.GetTimestamp());
        lock (_gate)
        {
            _running.Add(handshake);
            if (_stopping)
            {
                handshake.Stop();
            }
        }

        accepted.Schedule(handshake);
    }

    /// <summary>Called by the server's heartbeat: ends the handshakes whose deadline passed.</summary>
    public void OnHeartbeat(long now)
    {
        lock (_gate)
        {
            foreach (TlsHandshake handshake in _running)
            {
                if (now >= handshake.Deadline)
                {
                    handshake.Expire();
                }
            }
        }
    }

    /// <summary>True once the server began stopping: no handshake hands a connection over anymore.</summary>
    public bool IsStopping => _stopping;

    /// <summary>
    /// A completed handshake becomes an HTTP connection, registered with the server in the same step in which the
    /// handshake leaves this set, so a stopping server sees it in one or the other. False when the server stops, the
    /// deadline passed first, or the server's connection limit was reached meanwhile.
    /// </summary>
    public bool TryHandOff(TlsHandshake handshake, TlsConnection connection, [NotNullWhen(true)] out HttpConnection? http)
    {
        lock (_gate)
        {
            if (_stopping || handshake.IsTimedOut)
            {
                http = null;
                return false;
            }

            http = _startConnection(connection);
            Remove(handshake);
            return http is not null;
        }
    }

    /// <summary>A failed handshake closed its connection.</summary>
    public void Ended(TlsHandshake handshake)
    {
        lock (_gate)
        {
            Remove(handshake);
        }
    }

    private void Remove(TlsHandshake handshake)
    {
        if (_running.Remove(handshake) && _running.Count == 0)
        {
            _allEnded?.TrySetResult();
        }
    }

    /// <summary>
    /// Ends every running handshake (receiving stops, so each fails at once and closes with a FIN) and waits for them;
    /// after <paramref name="grace"/> the rest are aborted and waited for once more. No handshake hands over afterwards.
    /// </summary>
    public async Task StopAsync(TimeSpan grace)
    {
        TlsHandshake[] running;
        Task allEnded;
        lock (_gate)
        {
            _stopping = true;
            _allEnded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            if (_running.Count == 0)
            {
                return;
            }

            running = new TlsHandshake[_running.Count];
            _running.CopyTo(running);
            allEnded = _allEnded.Task;
        }

        foreach (TlsHandshake handshake in running)
        {
            handshake.Stop();
        }

        try
        {
            await allEnded.WaitAsync(grace, TimeProvider.System).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            TlsLog.HandshakesAborted(Logger, Count);
            foreach (TlsHandshake handshake in running)
            {
                handshake.Abort();
            }

            // Aborted connections end at once; one that still does not is left to the transport's disposal.
            await Task.WhenAny(allEnded, Task.Delay(grace, TimeProvider.System)).ConfigureAwait(false);
        }
    }
}
