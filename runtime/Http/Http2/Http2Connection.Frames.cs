using System;
using System.Buffers;
using System.Buffers.Binary;

namespace Falconet.Http.Http2;

// The frame handlers (RFC 9113 section 6): each checks what the frame type requires of its length, stream identifier and
// flags, then acts on the connection or the stream. A connection error throws Http2ConnectionException; a stream error
// resets that stream and the loop goes on.
internal sealed partial class Http2Connection
{
    private const int SettingsHeaderTableSize = 0x1;
    private const int SettingsEnablePush = 0x2;
    private const int SettingsMaxConcurrentStreams = 0x3;
    private const int SettingsInitialWindowSize = 0x4;
    private const int SettingsMaxFrameSize = 0x5;
    private const int SettingsMaxHeaderListSize = 0x6;

    private void ProcessFrame(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        if (_headerBlockStreamId != 0 && header.Type != Http2FrameType.Continuation)
        {
            // Section 4.3: a header block is one piece; nothing may come between its frames, on any stream.
            Http2ConnectionException.Throw(Http2ErrorReason.HeaderBlockInterrupted, "A frame arrived in the middle of a header block.");
        }

        switch (header.Type)
        {
            case Http2FrameType.Data:
                ProcessData(header, payload);
                break;
            case Http2FrameType.Headers:
                ProcessHeaders(header, payload);
                break;
            case Http2FrameType.Continuation:
                ProcessContinuation(header, payload);
                break;
            case Http2FrameType.Priority:
                ProcessPriority(header, payload);
                break;
            case Http2FrameType.RstStream:
                ProcessRstStream(header, payload);
                break;
            case Http2FrameType.Settings:
                ProcessSettings(header, payload);
                break;
            case Http2FrameType.PushPromise:
                // Section 8.4: a client cannot push.
                Http2ConnectionException.Throw(Http2ErrorReason.PushPromise, "A client sent PUSH_PROMISE.");
                break;
            case Http2FrameType.Ping:
                ProcessPing(header, payload);
                break;
            case Http2FrameType.GoAway:
                ProcessGoAway(header, payload);
                break;
            case Http2FrameType.WindowUpdate:
                ProcessWindowUpdate(header, payload);
                break;
            default:
                // Section 5.5: frames of unknown types are ignored.
                break;
        }
    }

    private void ProcessData(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        int streamId = header.StreamId;
        if (streamId == 0)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidStreamId, "DATA on stream 0.");
        }

        ReadOnlySequence<byte> data = RemovePadding(header, payload);
        bool endStream = header.HasFlag(Http2FrameFlags.EndStream);
        if (header.Length == 0 && !endStream)
        {
            CountEmptyFrame();
        }

        Http2ErrorReason? streamError = null;
        lock (Output.Gate)
        {
            // Section 6.9: the whole frame, padding included, counts toward the connection window, whatever the stream.
            if (header.Length > _receiveWindow)
            {
                Http2ConnectionException.Throw(Http2ErrorReason.FlowControlViolated, "DATA past the connection's receive window.");
            }

            _receiveWindow -= header.Length;
            if (_streams.TryGetValue(streamId, out Http2Stream? stream))
            {
                if (stream.State is Http2StreamState.HalfClosedRemote)
                {
                    // Section 5.1, half-closed (remote): the request already ended.
                    streamError = Http2ErrorReason.FrameAfterEndStream;
                }
                else if (header.Length > stream.ReceiveWindow)
                {
                    streamError = Http2ErrorReason.FlowControlViolated;
                }
                else if (!stream.ReceiveDataLocked(data, header.Length, endStream))
                {
                    // Section 8.1.1: more (or, at the end, fewer) body bytes than Content-Length.
                    streamError = Http2ErrorReason.MalformedRequest;
                }
                else
                {
                    if (endStream)
                    {
                        stream.EndOfRequestLocked();
                    }

                    return;
                }

                CreditLocked(header.Length);
                ResetStreamLocked(stream, streamError.Value);
            }
            else
            {
                CreditLocked(header.Length);
                if (streamId > _lastStreamId)
                {
                    // Section 5.1, idle: only HEADERS (or PRIORITY) may open a stream.
                    Http2ConnectionException.Throw(Http2ErrorReason.FrameOnIdleStream, "DATA on an idle stream.");
                }

                Http2StreamClosure? closure = _closedStreams.Find(streamId);
                if (closure == Http2StreamClosure.ResetByServer)
                {
                    // Sent before the client knew of the reset: ignored (its bytes went back to the window above).
                    return;
                }

                if (closure == Http2StreamClosure.Ended)
                {
                    // Section 5.1, closed: a frame after both END_STREAMs.
                    Http2ConnectionException.Throw(Http2ErrorReason.FrameOnClosedStream, "DATA on a closed stream.");
                }

                streamError = Http2ErrorReason.FrameOnClosedStream;
                WriteStreamResetLocked(streamId, streamError.Value);
            }
        }

        OnStreamErrorSent(streamId, streamError!.Value);
    }

    /// <summary>The payload without its padding (section 6.1); a pad length that leaves no room is a connection error.</summary>
    private static ReadOnlySequence<byte> RemovePadding(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        if (!header.HasFlag(Http2FrameFlags.Padded))
        {
            return payload;
        }

        if (payload.Length < 1)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidPadding, "A padded frame without its pad length.");
        }

        int padLength = payload.FirstSpan[0];
        if (padLength >= payload.Length)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidPadding, "The padding is as long as the frame or longer.");
        }

        return payload.Slice(1, payload.Length - 1 - padLength);
    }

    private void ProcessPriority(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        int streamId = header.StreamId;
        if (streamId == 0)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidStreamId, "PRIORITY on stream 0.");
        }

        if (header.Length != 5)
        {
            // Section 6.3: a stream error, the connection goes on.
            ResetStream(streamId, Http2ErrorReason.InvalidFrameLength);
            return;
        }

        Span<byte> bytes = stackalloc byte[5];
        payload.CopyTo(bytes);
        int dependency = (int)(BinaryPrimitives.ReadUInt32BigEndian(bytes) & 0x7FFF_FFFF);
        if (dependency == streamId)
        {
            // Section 5.3.1: a stream cannot depend on itself.
            ResetStream(streamId, Http2ErrorReason.SelfDependency);
        }

        // Otherwise ignored: RFC 9113 deprecates the priority signal of RFC 7540, and the server schedules streams as they come.
    }

    private void ProcessRstStream(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        int streamId = header.StreamId;
        if (streamId == 0)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidStreamId, "RST_STREAM on stream 0.");
        }

        if (header.Length != 4)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidFrameLength, "RST_STREAM whose length is not 4.");
        }

        if (streamId > _lastStreamId)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.FrameOnIdleStream, "RST_STREAM on an idle stream.");
        }

        // Rapid reset (CVE-2023-44487): every reset the client sends takes from the connection's budget.
        CountReset();
        var code = (Http2ErrorCode)ReadUInt32(payload);
        lock (Output.Gate)
        {
            if (_streams.TryGetValue(streamId, out Http2Stream? stream))
            {
                stream.ResetByPeerLocked(code);
            }
            else if (_closedStreams.Find(streamId) == Http2StreamClosure.Ended)
            {
                // A reset that crossed the last frame of the response: the stream is closed either way.
            }
        }
    }

    private void ProcessSettings(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        if (header.StreamId != 0)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidStreamId, "SETTINGS on a stream.");
        }

        if (header.HasFlag(Http2FrameFlags.Ack))
        {
            if (header.Length != 0)
            {
                Http2ConnectionException.Throw(Http2ErrorReason.InvalidFrameLength, "A SETTINGS acknowledgement with a payload.");
            }

            if (!_settingsReceived)
            {
                Http2ConnectionException.Throw(Http2ErrorReason.InvalidPreface, "The client's first frame was not its own SETTINGS.");
            }

            _settingsAcknowledged = true;
            return;
        }

        if (header.Length % 6 != 0)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidFrameLength, "SETTINGS whose length is not a multiple of 6.");
        }

        if (_settingsReceived)
        {
            CountControlFrame();
        }

        _settingsReceived = true;
        Span<byte> setting = stackalloc byte[6];
        ReadOnlySequence<byte> rest = payload;
        lock (Output.Gate)
        {
            while (!rest.IsEmpty)
            {
                rest.Slice(0, 6).CopyTo(setting);
                rest = rest.Slice(6);
                int id = BinaryPrimitives.ReadUInt16BigEndian(setting);
                uint value = BinaryPrimitives.ReadUInt32BigEndian(setting.Slice(2));
                ApplySettingLocked(id, value);
            }

            Output.WriteFrameHeader(0, Http2FrameType.Settings, Http2FrameFlags.Ack, 0);
        }
    }

    /// <summary>One parameter of the client's SETTINGS (section 6.5.2); unknown ones are ignored.</summary>
    private void ApplySettingLocked(int id, uint value)
    {
        switch (id)
        {
            case SettingsHeaderTableSize:
                SetEncoderTableSize(value);
                break;
            case SettingsEnablePush:
                if (value > 1)
                {
                    Http2ConnectionException.Throw(Http2ErrorReason.InvalidSetting, "SETTINGS_ENABLE_PUSH other than 0 or 1.");
                }

                break;
            case SettingsInitialWindowSize:
                if (value > int.MaxValue)
                {
                    Http2ConnectionException.Throw(Http2ErrorReason.WindowOverflow, "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1.");
                }

                SetInitialSendWindowLocked((int)value);
                break;
            case SettingsMaxFrameSize:
                if (value is < Http2FrameHeader.DefaultMaxFrameSize or > Http2FrameHeader.MaxPayloadLimit)
                {
                    Http2ConnectionException.Throw(Http2ErrorReason.InvalidSetting, "SETTINGS_MAX_FRAME_SIZE outside 2^14 to 2^24-1.");
                }

                Output.PeerMaxFrameSize = (int)value;
                break;
            case SettingsMaxConcurrentStreams:
            case SettingsMaxHeaderListSize:
                // Advice about what the client accepts: the server opens no streams, and its response heads are small.
                break;
        }
    }

    private void ProcessPing(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        if (header.StreamId != 0)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidStreamId, "PING on a stream.");
        }

        if (header.Length != 8)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidFrameLength, "PING whose length is not 8.");
        }

        if (header.HasFlag(Http2FrameFlags.Ack))
        {
            return;
        }

        CountControlFrame();
        Span<byte> opaque = stackalloc byte[8];
        payload.CopyTo(opaque);
        lock (Output.Gate)
        {
            Output.WritePing(Http2FrameFlags.Ack, opaque);
        }
    }

    private void ProcessGoAway(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        if (header.StreamId != 0)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidStreamId, "GOAWAY on a stream.");
        }

        if (header.Length < 8)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidFrameLength, "GOAWAY shorter than 8 bytes.");
        }

        // The client opens no more streams; the connection closes once the ones it has are answered.
        lock (Output.Gate)
        {
            _peerGoingAway = true;
        }
    }

    private void ProcessWindowUpdate(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        if (header.Length != 4)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.InvalidFrameLength, "WINDOW_UPDATE whose length is not 4.");
        }

        int streamId = header.StreamId;
        int increment = (int)(ReadUInt32(payload) & 0x7FFF_FFFF);
        if (streamId == 0)
        {
            if (increment == 0)
            {
                Http2ConnectionException.Throw(Http2ErrorReason.ZeroWindowIncrement, "WINDOW_UPDATE of 0 on the connection.");
            }

            lock (Output.Gate)
            {
                long window = Output.ConnectionWindow + increment;
                if (window > int.MaxValue)
                {
                    Http2ConnectionException.Throw(Http2ErrorReason.WindowOverflow, "The connection's send window passed 2^31-1.");
                }

                Output.ConnectionWindow = window;
                Output.WakeBlocked();
            }

            return;
        }

        if (streamId > _lastStreamId)
        {
            Http2ConnectionException.Throw(Http2ErrorReason.FrameOnIdleStream, "WINDOW_UPDATE on an idle stream.");
        }

        Http2ErrorReason? error = null;
        lock (Output.Gate)
        {
            if (!_streams.TryGetValue(streamId, out Http2Stream? stream))
            {
                // A stream that closed meanwhile (section 6.9: expected right after END_STREAM).
                return;
            }

            if (increment == 0)
            {
                error = Http2ErrorReason.ZeroWindowIncrement;
            }
            else if (!stream.OnWindowUpdateLocked(increment))
            {
                error = Http2ErrorReason.WindowOverflow;
            }
            else
            {
                return;
            }

            ResetStreamLocked(stream, error.Value);
        }

        OnStreamErrorSent(streamId, error.Value);
    }

    private static uint ReadUInt32(ReadOnlySequence<byte> payload)
    {
        Span<byte> bytes = stackalloc byte[4];
        payload.Slice(0, 4).CopyTo(bytes);
        return BinaryPrimitives.ReadUInt32BigEndian(bytes);
    }

    private void CountControlFrame()
    {
        if (!_controlBudget.TryTake(_settings.TimeProvider.GetTimestamp()))
        {
            Http2ConnectionException.Throw(Http2ErrorReason.ControlFrameRate, "Too many PING and SETTINGS frames.");
        }
    }

    private void CountEmptyFrame()
    {
        if (!_emptyBudget.TryTake(_settings.TimeProvider.GetTimestamp()))
        {
            Http2ConnectionException.Throw(Http2ErrorReason.EmptyFrameRate, "Too many frames without content.");
        }
    }

    /// <summary>Takes one from the reset budget: a reset the client sent, or one it caused (a stream error, a refused stream).</summary>
    private void CountReset()
    {
        if (!_resetBudget.TryTake(_settings.TimeProvider.GetTimestamp()))
        {
            Http2ConnectionException.Throw(Http2ErrorReason.StreamResetRate, "Too many stream resets.");
        }
    }
}
