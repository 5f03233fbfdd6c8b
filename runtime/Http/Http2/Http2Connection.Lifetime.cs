using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Diagnostics;
using Falconet.Transport;

namespace Falconet.Http.Http2;

// The connection's life: the server preface, deadlines (idle, header block, SETTINGS acknowledgement), the heartbeat's
// rate checks, GOAWAY on stop or error, and how errors are reported.
internal sealed partial class Http2Connection
{
    private Http2FrameBudget _resetBudget;
    private Http2FrameBudget _controlBudget;
    private Http2FrameBudget _emptyBudget;
    private volatile bool _goAwaySent;
    private bool _peerGoingAway;
    private volatile bool _settingsAcknowledged;
    private long _settingsAckDeadline = long.MaxValue;
    private bool _idleDeadlineArmed;
    private Http2ErrorReason? _failure;

    /// <summary>True once the loop should stop reading: GOAWAY went out or came in and no stream is open, or an error ended it.</summary>
    private bool IsDone => _failure is not null || ((_goAwaySent || _peerGoingAway) && Volatile.Read(ref _activeStreams) == 0);

    /// <summary>The server's SETTINGS (section 3.4), and a WINDOW_UPDATE that opens the connection window to its configured size.</summary>
    private void SendServerPreface()
    {
        Span<byte> settings = stackalloc byte[4 * 6];
        int length = 0;
        length += WriteSetting(settings.Slice(length), SettingsMaxConcurrentStreams, (uint)_limits.MaxConcurrentStreams);
        length += WriteSetting(settings.Slice(length), SettingsInitialWindowSize, (uint)_limits.InitialStreamWindowSize);
        length += WriteSetting(settings.Slice(length), SettingsMaxFrameSize, (uint)_limits.MaxFrameSize);
        length += WriteSetting(settings.Slice(length), SettingsMaxHeaderListSize, (uint)_settings.Limits.MaxRequestHeadersSize);
        if (_limits.HeaderTableSize != 4096)
        {
            Span<byte> all = stackalloc byte[5 * 6];
            settings.Slice(0, length).CopyTo(all);
            length += WriteSetting(all.Slice(length), SettingsHeaderTableSize, (uint)_limits.HeaderTableSize);
            settings = all;
        }

        lock (Output.Gate)
        {
            Output.WriteFrameHeader(length, Http2FrameType.Settings, Http2FrameFlags.None, 0);
            Output.WritePayload(settings.Slice(0, length));
            int increase = _limits.InitialConnectionWindowSize - 65_535;
            if (increase > 0)
            {
                Output.WriteWindowUpdate(0, increase);
            }
        }

        _settingsAckDeadline = _settings.DeadlineAfter(ToTicks(_limits.SettingsAckTimeout));
        Output.SendNow();

        static int WriteSetting(Span<byte> destination, int id, uint value)
        {
            BinaryPrimitives.WriteUInt16BigEndian(destination, (ushort)id);
            BinaryPrimitives.WriteUInt32BigEndian(destination.Slice(2), value);
            return 6;
        }
    }

    private long ToTicks(TimeSpan time) => (long)(time.TotalSeconds * _settings.TimeProvider.TimestampFrequency);

    /// <summary>
    /// Before the loop waits for bytes: a header block in progress must complete within the request-headers timeout; a
    /// connection without open streams closes after the keep-alive timeout, counted from when it became idle.
    /// </summary>
    private void ArmDeadline()
    {
        lock (Output.Gate)
        {
            if (_headerBlockStreamId != 0)
            {
                if (!_headerBlockDeadlineArmed)
                {
                    _headerBlockDeadlineArmed = true;
                    _idleDeadlineArmed = false;
                    _deadline.TrySet(_settings.DeadlineAfter(_settings.RequestHeadersTimeout));
                }

                return;
            }

            if (_headerBlockDeadlineArmed)
            {
                // The block completed: no deadline while streams are handled, the idle one otherwise (below).
                _headerBlockDeadlineArmed = false;
                _deadline.TrySet(ConnectionDeadline.None);
            }

            if (_activeStreams == 0)
            {
                // What OnIdleLocked leaves to this call during a batch: outside it, it arms the idle deadline.
                OnIdleLocked();
            }
        }
    }

    /// <summary>No stream is open (under the lock): the keep-alive clock starts, unless it runs already.</summary>
    private void OnIdleLocked()
    {
        if (_goAwaySent || _peerGoingAway)
        {
            // The last stream of a connection going away: wake the loop, which sends what is left and closes. Not from here:
            // the caller holds the lock and has frames to flush, and on a libuv loop thread the loop would resume inline.
            if (!_connectionEnded)
            {
                ThreadPool.UnsafeQueueUserWorkItem(static connection => connection.StopReceiving(), this, preferLocal: false);
            }

            return;
        }

        // On the read loop's thread during a batch the loop arms it before it waits (ArmDeadline): a stream that closes and
        // the next that opens in the same batch read no clock.
        if (!_idleDeadlineArmed && _headerBlockStreamId == 0 && !Output.IsBatchThread)
        {
            _idleDeadlineArmed = true;
            _deadline.TrySet(_settings.DeadlineAfter(_settings.KeepAliveTimeout));
        }
    }

    /// <summary>A stream opened: no deadline runs while requests are handled.</summary>
    private void OnBusyLocked()
    {
        if (_idleDeadlineArmed || _headerBlockDeadlineArmed)
        {
            _idleDeadlineArmed = false;
            _headerBlockDeadlineArmed = false;
            _deadline.TrySet(ConnectionDeadline.None);
        }
    }

    private void StopReceiving()
    {
        _receiveStopped = true;
        _transport.StopReceiving();
    }

    /// <summary>The receive returned 0: the peer closed, or the heartbeat or a stopping server stopped it.</summary>
    private async ValueTask OnReceiveEndedAsync()
    {
        // Frames a stream wrote just before the loop was woken go out before the connection closes.
        Output.SendNow();
        if (!_receiveStopped)
        {
            // The client closed its side: nothing more to say to it.
            return;
        }

        if (_deadline.IsExpired && !_goAwaySent)
        {
            if (_headerBlockStreamId != 0)
            {
                await FailAsync(Http2ErrorReason.RequestHeadersTimeout, "A header block did not complete within the request-headers timeout.").ConfigureAwait(false);
                return;
            }

            if (_settings.Shutdown.IsCancellationRequested)
            {
                ReportClose(ConnectionCloseReasons.Name(ConnectionCloseReason.ServerStopping));
            }
            else
            {
                ReportClose(ConnectionCloseReasons.Name(ConnectionCloseReason.KeepAliveTimeout));
            }

            SendGoAway(Http2ErrorCode.NoError);
        }

        await WaitForSendsAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// After a connection error's GOAWAY, as HTTP/1.1's lingering close (RFC 9113 section 5.4.1 asks that the GOAWAY be
    /// sent before the close): the sending side is shut down, and what the client still sends (frames it wrote before it
    /// read the GOAWAY) is read and dropped until it closes, for at most <see cref="HttpConnectionSettings.LingerTime"/> or
    /// <see cref="HttpConnectionSettings.LingerMaxBytes"/>. Closing with unread input would reset the connection, and a
    /// reset can destroy the GOAWAY before the client reads it.
    /// </summary>
    private async ValueTask LingerAsync()
    {
        _transport.ShutdownSend();

        // Published before the shutdown signal is read: a stopping server either sees it (CloseIfIdle stops the receive)
        // or this loop sees the stop.
        _lingering = true;
        bool armed = _deadline.TrySet(_settings.DeadlineAfter(_settings.LingerTimeout));
        Interlocked.MemoryBarrier();
        if (!armed || _settings.Shutdown.IsCancellationRequested)
        {
            return;
        }

        _input.Dispose();
        long discarded = 0;
        try
        {
            while (discarded < HttpConnectionSettings.LingerMaxBytes)
            {
                int received = await _transport.ReceiveAsync(_input.GetWritableMemory(SlabMemoryPool.BlockSize / 2)).ConfigureAwait(false);
                if (received == 0)
                {
                    return;
                }

                discarded += received;
            }
        }
        catch (ConnectionResetException)
        {
        }
    }

    /// <summary>Writes GOAWAY with the last stream the server took up, and sends it.</summary>
    private void SendGoAway(Http2ErrorCode code)
    {
        lock (Output.Gate)
        {
            if (!Output.IsClosed)
            {
                Output.WriteGoAway(_lastStreamId, code);
            }

            _goAwaySent = true;
        }

        Output.SendNow();
    }

    /// <summary>A connection error (section 5.4.1): GOAWAY with its code, logged and counted, then the connection closes.</summary>
    private async ValueTask FailAsync(Http2ErrorReason reason, string detail)
    {
        if (_failure is not null)
        {
            return;
        }

        _failure = reason;
        Http2ErrorCode code = Http2Errors.GetCode(reason);
        string name = Http2Errors.GetName(reason);
        HttpLog.Http2ConnectionError(_settings.Logger, Id, name, Http2Errors.GetCodeName(code), detail);
        ServerMetrics.CountHttp2Error(ServerMetrics.Http2ConnectionErrors, name, Http2Errors.GetCodeName(code));
        ReportClose(name);
        SendGoAway(code);
        await WaitForSendsAsync().ConfigureAwait(false);
    }

    /// <summary>A connection error found outside the read loop (the heartbeat's SETTINGS deadline): GOAWAY, then the loop is woken to close.</summary>
    private void FailFromOutside(Http2ErrorReason reason, string detail)
    {
        lock (Output.Gate)
        {
            if (_failure is not null || _connectionEnded)
            {
                return;
            }

            _failure = reason;
        }

        Http2ErrorCode code = Http2Errors.GetCode(reason);
        string name = Http2Errors.GetName(reason);
        HttpLog.Http2ConnectionError(_settings.Logger, Id, name, Http2Errors.GetCodeName(code), detail);
        ServerMetrics.CountHttp2Error(ServerMetrics.Http2ConnectionErrors, name, Http2Errors.GetCodeName(code));
        ReportClose(name);
        SendGoAway(code);
        StopReceiving();
    }

    private string? _closeReason;

    /// <summary>A close the server initiates, logged and counted once (falconet.server.closed_connections).</summary>
    private void ReportClose(string reason)
    {
        if (_closeReason is not null)
        {
            return;
        }

        _closeReason = reason;
        HttpLog.ClosedByServer(_settings.Logger, Id, reason);
        ServerMetrics.Count(ServerMetrics.ClosedConnections, reason);
    }

    /// <summary>Resets a stream for a stream error the client caused (on the read loop, outside the lock).</summary>
    private void ResetStream(int streamId, Http2ErrorReason reason)
    {
        lock (Output.Gate)
        {
            if (_streams.TryGetValue(streamId, out Http2Stream? stream))
            {
                ResetStreamLocked(stream, reason);
            }
            else
            {
                WriteStreamResetLocked(streamId, reason);
            }
        }

        OnStreamErrorSent(streamId, reason);
    }

    private static void ResetStreamLocked(Http2Stream stream, Http2ErrorReason reason)
        => stream.ResetFromServerLocked(Http2Errors.GetCode(reason));

    private void WriteStreamResetLocked(int streamId, Http2ErrorReason reason)
    {
        if (!Output.IsClosed)
        {
            Output.WriteRstStream(streamId, Http2Errors.GetCode(reason));
        }
    }

    /// <summary>A stream error the client caused was answered: logged, counted, and taken from the reset budget.</summary>
    private void OnStreamErrorSent(int streamId, Http2ErrorReason reason)
    {
        ReportStreamError(streamId, reason);
        CountReset();
    }

    /// <summary>Logs and counts a stream error (falconet.server.http2.stream_errors).</summary>
    public void ReportStreamError(int streamId, Http2ErrorReason reason)
    {
        string name = Http2Errors.GetName(reason);
        string code = Http2Errors.GetCodeName(Http2Errors.GetCode(reason));
        HttpLog.Http2StreamError(_settings.Logger, Id, streamId, name, code);
        ServerMetrics.CountHttp2Error(ServerMetrics.Http2StreamErrors, name, code);
    }

    /// <summary>Logs a refused request with its reason and counts it in falconet.server.rejected_requests, as on HTTP/1.1.</summary>
    public void ReportRejection(BadHttpRequestException rejection)
    {
        string reason = RequestRejections.GetName(rejection.Reason);
        HttpLog.BadRequest(_settings.Logger, Id, reason, rejection.StatusCode, rejection.Message);
        ServerMetrics.Count(ServerMetrics.RejectedRequests, reason);
    }

    /// <summary>
    /// Called by the server's heartbeat: the connection's deadline (idle, header block), the SETTINGS acknowledgement, the
    /// rate the client reads at (a reset, as on HTTP/1.1), and each stream's body and window rates.
    /// </summary>
    public override void OnHeartbeat(long now)
    {
        if (_deadline.TryExpireIfPassed(now))
        {
            StopReceiving();
        }

        if (!_settingsAcknowledged && now >= _settingsAckDeadline)
        {
            _settingsAckDeadline = long.MaxValue;
            FailFromOutside(Http2ErrorReason.SettingsTimeout, "The client did not acknowledge the server's SETTINGS in time.");
        }

        if (_rates.Check(now) == ConnectionCloseReason.MinResponseDataRate)
        {
            _abortRequested = true;
            _transport.Abort();
            return;
        }

        lock (Output.Gate)
        {
            List<Http2Stream> slow = _slowStreams ??= new List<Http2Stream>();
            List<ConnectionCloseReason> reasons = _slowReasons ??= new List<ConnectionCloseReason>();
            foreach (Http2Stream stream in _streams.Values)
            {
                ConnectionCloseReason violation = stream.Rates.Check(now);
                if (violation != ConnectionCloseReason.None)
                {
                    slow.Add(stream);
                    reasons.Add(violation);
                }
            }

            for (int i = 0; i < slow.Count; i++)
            {
                Http2Stream stream = slow[i];
                if (reasons[i] == ConnectionCloseReason.MinRequestBodyDataRate)
                {
                    // The handler's read fails with 408; a stream drained after its handler is told to stop sending.
                    stream.FailBodyTooSlowLocked();
                }
                else
                {
                    // The client keeps this stream's window (or the connection's) shut: the stream is cancelled.
                    ReportStreamError(stream.Id, Http2ErrorReason.MinResponseDataRate);
                    stream.ResetFromServerLocked(Http2Errors.GetCode(Http2ErrorReason.MinResponseDataRate));
                }
            }

            slow.Clear();
            reasons.Clear();
        }

        Output.Flush();
    }

    private List<Http2Stream>? _slowStreams;
    private List<ConnectionCloseReason>? _slowReasons;

    /// <summary>
    /// The server stops: GOAWAY with the last stream taken up (streams the client opened after it are not processed, and
    /// it may retry them elsewhere); the connection closes once its open streams are answered, or at the shutdown timeout.
    /// </summary>
    public override void CloseIfIdle()
    {
        if (_lingering)
        {
            StopReceiving();
            return;
        }

        bool idle;
        lock (Output.Gate)
        {
            if (_goAwaySent || _connectionEnded)
            {
                return;
            }

            idle = _activeStreams == 0;
        }

        ReportCloseIfIdle(idle);
        SendGoAway(Http2ErrorCode.NoError);
        if (Volatile.Read(ref _activeStreams) == 0)
        {
            StopReceiving();
        }
    }

    private void ReportCloseIfIdle(bool idle)
    {
        if (idle)
        {
            ReportClose(ConnectionCloseReasons.Name(ConnectionCloseReason.ServerStopping));
        }
    }

    /// <summary>The shutdown timeout passed: the transport is reset, every stream abandoned.</summary>
    public override void Abort()
    {
        ReportClose(ConnectionCloseReasons.Name(ConnectionCloseReason.ShutdownTimeout));
        _abortRequested = true;
        EndStreams(new ConnectionAbortedException("The server aborted the connection at its shutdown timeout."));
        _transport.Abort();
    }
}
