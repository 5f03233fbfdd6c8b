using System;
using System.Threading;

namespace Falconet.Http;

/// <summary>
/// Measures how fast one connection's client sends the request body and reads the response, over the time the
/// connection waits on it, so that the server's heartbeat can close a client below the minimum rates.
/// </summary>
/// <remarks>
/// <para>
/// Request body (as Kestrel's MinRequestBodyDataRate): only time spent waiting for body bytes counts, so a handler
/// that is slow to read does not count against the client. Once the waiting time passes the grace period, the body
/// bytes received during the waits must average the rate.
/// </para>
/// <para>
/// Response: a send that has to wait for the client (the socket buffer is full) must complete within the time its
/// bytes take at the rate, and never needs to within less than the grace period.
/// </para>
/// <para>
/// The connection writes the timing fields only when a receive or a send goes pending (the clock is read then, never
/// on a path that completes synchronously); the heartbeat only reads them, once a second. A racing read can only
/// under-count the time waited, never double-count it.
/// </para>
/// </remarks>
internal sealed class DataRateMonitor
{
    private const long NotWaiting = long.MinValue;

    private readonly TimeProvider _clock;
    private readonly DataRateLimit _serverBody;
    private readonly DataRateLimit _serverResponse;

    // The server's limits, or those the current request set (HttpContext.MinRequestBodyDataRate). The heartbeat reads the
    // body limit only while a body receive waits; a request that changes it during such a wait may have one check made
    // against a mix of the two, and the next check is right.
    private DataRateLimit _body;
    private DataRateLimit _response;

    private long _bodyWaitingSince = NotWaiting;
    private long _bodyWaited;
    private long _bodyBytes;
    private long _sendingSince = NotWaiting;
    private long _sendAllowed;
    private int _violation;

    /// <param name="clock">The clock the limits were made for (<see cref="DataRateLimit"/> is in its timestamp units).</param>
    /// <param name="minRequestBodyRate">The least rate a request body must arrive at (default: none).</param>
    /// <param name="minResponseRate">The least rate the client must read the response at (default: none).</param>
    public DataRateMonitor(TimeProvider clock, DataRateLimit minRequestBodyRate, DataRateLimit minResponseRate)
    {
        _clock = clock;
        _body = _serverBody = minRequestBodyRate;
        _response = _serverResponse = minResponseRate;
    }

    /// <summary>Limits of the current request instead of the server's, until <see cref="RestoreServerLimits"/>.</summary>
    public void SetLimits(DataRateLimit requestBody, DataRateLimit response)
    {
        _body = requestBody;
        _response = response;
    }

    /// <summary>The server's limits again (a new request starts).</summary>
    public void RestoreServerLimits()
    {
        _body = _serverBody;
        _response = _serverResponse;
    }

    /// <summary>The rate the client fell below (set once, by the heartbeat), or <see cref="ConnectionCloseReason.None"/>.</summary>
    public ConnectionCloseReason Violation => (ConnectionCloseReason)Volatile.Read(ref _violation);

    /// <summary>A new request body starts: nothing waited, nothing received.</summary>
    public void ResetBody()
    {
        Volatile.Write(ref _bodyWaited, 0);
        Volatile.Write(ref _bodyBytes, 0);
    }

    /// <summary>A receive of body bytes had to wait for the client.</summary>
    public void BodyWaitStarted()
    {
        if (_body.Enabled)
        {
            Volatile.Write(ref _bodyWaitingSince, _clock.GetTimestamp());
        }
    }

    /// <summary>That receive completed with <paramref name="received"/> bytes.</summary>
    public void BodyWaitEnded(int received)
    {
        long since = _bodyWaitingSince;
        if (since == NotWaiting)
        {
            return;
        }

        // Cleared before the time is added: a heartbeat reading in between misses this wait instead of counting it twice.
        Volatile.Write(ref _bodyWaitingSince, NotWaiting);
        Volatile.Write(ref _bodyWaited, _bodyWaited + (_clock.GetTimestamp() - since));
        Volatile.Write(ref _bodyBytes, _bodyBytes + received);
    }

    /// <summary>A send of <paramref name="bytes"/> had to wait for the client.</summary>
    public void SendStarted(long bytes)
    {
        if (_response.Enabled)
        {
            Volatile.Write(ref _sendAllowed, _response.AllowedTicks(bytes));
            Volatile.Write(ref _sendingSince, _clock.GetTimestamp());
        }
    }

    /// <summary>That send completed (or failed).</summary>
    public void SendEnded() => Volatile.Write(ref _sendingSince, NotWaiting);

    /// <summary>
    /// Called by the heartbeat: returns the rate the client has just fallen below, once; afterwards, and while the
    /// client keeps up, <see cref="ConnectionCloseReason.None"/>.
    /// </summary>
    public ConnectionCloseReason Check(long now)
    {
        ConnectionCloseReason found = Find(now);
        return found != ConnectionCloseReason.None
            && Interlocked.CompareExchange(ref _violation, (int)found, (int)ConnectionCloseReason.None) == (int)ConnectionCloseReason.None
            ? found
            : ConnectionCloseReason.None;
    }

    private ConnectionCloseReason Find(long now)
    {
        long sendingSince = Volatile.Read(ref _sendingSince);
        if (sendingSince != NotWaiting && now - sendingSince > Volatile.Read(ref _sendAllowed))
        {
            return ConnectionCloseReason.MinResponseDataRate;
        }

        long waited = Volatile.Read(ref _bodyWaited);
        long waitingSince = Volatile.Read(ref _bodyWaitingSince);
        if (waitingSince == NotWaiting)
        {
            return ConnectionCloseReason.None;
        }

        waited += now - waitingSince;
        return _body.IsBelow(Volatile.Read(ref _bodyBytes), waited) ? ConnectionCloseReason.MinRequestBodyDataRate : ConnectionCloseReason.None;
    }
}
