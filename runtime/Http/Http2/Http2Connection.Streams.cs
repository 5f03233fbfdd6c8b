using System;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace Falconet.Http.Http2;

// The streams of the connection: the table of open ones, the pool of stream objects, what is remembered of closed ones,
// and the receive windows the handlers' reads give back.
internal sealed partial class Http2Connection
{
    /// <summary>How many closed streams are remembered, to answer a late frame for one as section 5.1 says.</summary>
    private const int RememberedClosedStreams = 128;

    private readonly Dictionary<int, Http2Stream> _streams = new();
    private readonly Stack<Http2Stream> _pool = new();
    private readonly ClosedStreams _closedStreams = new(RememberedClosedStreams);
    private readonly Http2Signal _allReleased = new();
    private readonly int _connectionWindowUpdateThreshold;
    private int _lastStreamId;
    private int _activeStreams;
    private int _streamsInUse;
    private long _requestCount;
    private int _receiveWindow;
    private int _connectionUnacknowledged;
    private int _peerInitialWindow = 65_535;

    /// <summary>Body bytes a handler reads before its stream's receive window is topped up with a WINDOW_UPDATE.</summary>
    public int StreamWindowUpdateThreshold { get; }

    /// <summary>
    /// Takes a stream object into use for a new stream and counts it open (under the lock). Null when the client is past
    /// SETTINGS_MAX_CONCURRENT_STREAMS, or has so many reset streams whose handlers still run that taking more work would
    /// be unbounded (rapid reset): the stream is refused.
    /// </summary>
    private Http2Stream? TryOpenStreamLocked(int streamId, bool requestEnded)
    {
        int max = _limits.MaxConcurrentStreams;
        if (_activeStreams >= max || _streamsInUse >= 2 * max)
        {
            return null;
        }

        Http2Stream stream = _pool.Count != 0 ? _pool.Pop() : new Http2Stream(this, _settings);
        _streamsInUse++;
        _activeStreams++;
        _requestCount++;
        stream.Open(streamId, _requestCount, ReceiveWindowOfNewStream, _peerInitialWindow, requestEnded);
        _streams.Add(streamId, stream);
        OnBusyLocked();
        return stream;
    }

    /// <summary>
    /// The receive window a new stream starts with: what the server announced, or the protocol's default while the client
    /// may not have applied the announcement yet (it applies it on receipt, and may have sent before).
    /// </summary>
    private int ReceiveWindowOfNewStream => _settingsAcknowledged
        ? _limits.InitialStreamWindowSize
        : Math.Max(_limits.InitialStreamWindowSize, 65_535);

    /// <summary>A stream reached closed (under the lock): it leaves the table and stops counting toward the limit.</summary>
    public void StreamClosedLocked(Http2Stream stream)
    {
        if (!_streams.Remove(stream.Id))
        {
            return;
        }

        _activeStreams--;
        _closedStreams.Add(stream.Id, stream.Closure);
        if (_activeStreams == 0)
        {
            OnIdleLocked();
        }
    }

    /// <summary>A stream object is free again: its handler is done and the stream is closed (under the lock).</summary>
    public void ReleaseLocked(Http2Stream stream)
    {
        stream.Recycle();
        _streamsInUse--;

        // Kept after the connection ended too: ReleaseAsync disposes the application's state of every stream object.
        _pool.Push(stream);
        if (_connectionEnded && _streamsInUse == 0)
        {
            _allReleased.Set();
        }
    }

    /// <summary>
    /// Gives <paramref name="count"/> bytes back to the connection's receive window (a handler read them, or they were
    /// dropped), with a WINDOW_UPDATE once half of the window is waiting (under the lock). True when a frame was written.
    /// </summary>
    public bool CreditLocked(int count)
    {
        _connectionUnacknowledged += count;
        if (_connectionUnacknowledged < _connectionWindowUpdateThreshold || Output.IsClosed)
        {
            return false;
        }

        Output.WriteWindowUpdate(0, _connectionUnacknowledged);
        _receiveWindow += _connectionUnacknowledged;
        _connectionUnacknowledged = 0;
        return true;
    }

    /// <summary>The client's SETTINGS_INITIAL_WINDOW_SIZE: every open stream's send window moves by the difference (section 6.9.2).</summary>
    private void SetInitialSendWindowLocked(int value)
    {
        long delta = (long)value - _peerInitialWindow;
        _peerInitialWindow = value;
        foreach (Http2Stream stream in _streams.Values)
        {
            if (!stream.AdjustSendWindowLocked(delta))
            {
                Http2ConnectionException.Throw(Http2ErrorReason.WindowOverflow, "A stream's send window passed 2^31-1.");
            }
        }
    }

    /// <summary>The connection ended: every stream still open is abandoned (its handler's waits fail).</summary>
    private void EndStreams(Exception reason)
    {
        Output.Close(reason);
        lock (Output.Gate)
        {
            _connectionEnded = true;
            foreach (Http2Stream stream in new List<Http2Stream>(_streams.Values))
            {
                stream.ConnectionEndedLocked(reason);
            }
        }
    }

    private bool _connectionEnded;

    /// <summary>
    /// After the transport is closed: waits until every handler still running has returned (a handler that never does keeps
    /// its stream's blocks, as on HTTP/1.1), disposes the application's state of every stream object
    /// (<see cref="HttpContext.ConnectionState"/>, so it learns that the connection ended, as on HTTP/1.1), then returns the
    /// connection's blocks.
    /// </summary>
    public async Task ReleaseAsync()
    {
        ValueTask released;
        lock (Output.Gate)
        {
            released = _streamsInUse == 0 ? default : _allReleased.Arm();
        }

        await released.ConfigureAwait(false);
        Http2Stream[] streams;
        lock (Output.Gate)
        {
            streams = _pool.ToArray();
            _pool.Clear();
        }

        foreach (Http2Stream stream in streams)
        {
            try
            {
                await stream.DisposeConnectionStateAsync().ConfigureAwait(false);
            }
            catch (Exception exception)
            {
                HttpLog.ConnectionError(_settings.Logger, Id, exception);
            }
        }

        Output.Dispose();
        _input.Dispose();
    }

    /// <summary>The last closed streams and how each closed, oldest forgotten first.</summary>
    private sealed class ClosedStreams
    {
        private readonly int[] _ids;
        private readonly Http2StreamClosure[] _closures;
        private int _next;

        public ClosedStreams(int capacity)
        {
            _ids = new int[capacity];
            _closures = new Http2StreamClosure[capacity];
        }

        public void Add(int id, Http2StreamClosure closure)
        {
            _ids[_next] = id;
            _closures[_next] = closure;
            _next = (_next + 1) % _ids.Length;
        }

        /// <summary>How <paramref name="id"/> closed, or null when it is not remembered (never opened, or long ago).</summary>
        public Http2StreamClosure? Find(int id)
        {
            for (int i = 0; i < _ids.Length; i++)
            {
                if (_ids[i] == id)
                {
                    return _closures[i];
                }
            }

            return null;
        }
    }
}
