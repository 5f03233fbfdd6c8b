using System;
using System.IO;
using System.Threading.Tasks;
using Falconet.Buffers;

namespace Falconet.Http.Http2;

// The response: its head as a HEADERS frame, its body as DATA frames within the flow-control windows, its trailers.
internal sealed partial class Http2Stream
{
    private readonly Http2Signal _sendSignal = new();
    private long _sendWindow;
    private bool _blockedOnWindow;

    /// <summary>The write-behind bound of one stream: body bytes a handler may buffer before its writes wait.</summary>
    public long OutputLimit => _settings.OutputBufferLimit;

    /// <summary>
    /// Writes the response head as HEADERS (and CONTINUATION) frames. The head is encoded before anything is written, so a
    /// head that cannot be written (a header value with a control character) leaves nothing behind.
    /// </summary>
    /// <exception cref="InvalidOperationException">A header cannot be sent.</exception>
    public void WriteResponseHead(int statusCode, ResponseHeaders headers, bool endStream)
    {
        lock (_output.Gate)
        {
            if (IsReset || _output.IsClosed)
            {
                return;
            }

            _connection.WriteHeadersLocked(Id, statusCode, headers, endStream);
            if (endStream)
            {
                EndOfResponseLocked();
            }
        }
    }

    /// <summary>Writes the trailers as a HEADERS frame with END_STREAM.</summary>
    public void WriteTrailers(ResponseHeaders trailers)
    {
        lock (_output.Gate)
        {
            if (IsReset || _output.IsClosed)
            {
                return;
            }

            _connection.WriteHeadersLocked(Id, statusCode: 0, trailers, endStream: true);
            EndOfResponseLocked();
        }
    }

    /// <summary>Sends the interim 100 Continue, then the bytes out at once (the client waits for them).</summary>
    private void WriteContinue()
    {
        lock (_output.Gate)
        {
            if (IsReset || _output.IsClosed || Response.HasStarted)
            {
                return;
            }

            _connection.WriteHeadersLocked(Id, statusCode: 100, headers: null, endStream: false);
        }

        _output.Flush();
    }

    /// <summary>
    /// Moves staged body bytes into DATA frames as far as the stream window, the connection window and the output room
    /// allow; with <paramref name="endStream"/>, END_STREAM goes with the last byte (or alone, on an empty frame). True when
    /// all of it went out (or the stream is gone and the bytes were dropped); false when the rest waits for window or room.
    /// </summary>
    public bool TrySendData(BlockChain staged, bool endStream)
    {
        lock (_output.Gate)
        {
            if (IsReset || _output.IsClosed)
            {
                if (staged.Length != 0)
                {
                    staged.Consume(staged.GetSequence().End);
                }

                return true;
            }

            while (true)
            {
                long length = staged.Length;
                if (length == 0 && !endStream)
                {
                    return true;
                }

                int count = (int)Math.Min(length, Math.Min(Math.Min(_sendWindow, _output.ConnectionWindow), _output.PeerMaxFrameSize));
                if (length != 0 && (count <= 0 || _output.IsOverLimit))
                {
                    BlockLocked(count <= 0, length);
                    return false;
                }

                bool last = endStream && count == length;
                _output.WriteFrameHeader(count, Http2FrameType.Data, last ? Http2FrameFlags.EndStream : Http2FrameFlags.None, Id);
                if (count != 0)
                {
                    _output.WritePayload(staged, count);
                    _sendWindow -= count;
                    _output.ConnectionWindow -= count;
                    if (_blockedOnWindow)
                    {
                        _blockedOnWindow = false;
                        _rates.SendEnded();
                    }
                }

                _output.TrackPeak();
                if (last)
                {
                    EndOfResponseLocked();
                    return true;
                }

                if (count == length)
                {
                    return true;
                }
            }
        }
    }

    private void BlockLocked(bool onWindow, long pending)
    {
        if (onWindow && !_blockedOnWindow)
        {
            // Waiting for the client to open its window: as a send that waits for it, within the minimum response rate.
            _blockedOnWindow = true;
            _rates.SendStarted(pending);
        }

        _output.AddBlocked(this);
    }

    /// <summary>
    /// Waits until sending can go on: the windows have room and the output is under its bound. Completes at once when that
    /// is already so; throws once the stream was reset or the connection closed.
    /// </summary>
    public ValueTask WaitToSendAsync()
    {
        // What this stream wrote so far must be on its way: the room it waits for comes from the client reading it.
        _output.Flush();
        lock (_output.Gate)
        {
            if (IsReset || _output.IsClosed)
            {
                return ValueTask.FromException(_output.IsClosed ? _output.Failure : new IOException("The stream was reset."));
            }

            if (_sendWindow > 0 && _output.ConnectionWindow > 0 && !_output.IsOverLimit)
            {
                return default;
            }

            _output.AddBlocked(this);
            return _sendSignal.Arm();
        }
    }

    /// <summary>Wakes a handler waiting to send (under the lock).</summary>
    public void WakeSender() => _sendSignal.Set();

    /// <summary>A WINDOW_UPDATE for this stream (under the lock); false when the window would pass 2^31-1 (RFC 9113 section 6.9.1).</summary>
    public bool OnWindowUpdateLocked(int increment)
    {
        long window = _sendWindow + increment;
        if (window > int.MaxValue)
        {
            return false;
        }

        _sendWindow = window;
        if (window > 0)
        {
            _sendSignal.Set();
        }

        return true;
    }

    /// <summary>SETTINGS_INITIAL_WINDOW_SIZE changed by <paramref name="delta"/> (may go negative, section 6.9.2); false on overflow.</summary>
    public bool AdjustSendWindowLocked(long delta)
    {
        long window = _sendWindow + delta;
        if (window > int.MaxValue)
        {
            return false;
        }

        _sendWindow = window;
        if (window > 0)
        {
            _sendSignal.Set();
        }

        return true;
    }
}
