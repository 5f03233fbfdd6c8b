using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Http2;
using Falconet.Http.Http2.HPack;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// A raw HTTP/2 client for tests: writes exact frames (well formed or not), reads the server's frames one by one and
/// decodes its header blocks with the runtime's HPACK decoder. Requests are encoded as literals without indexing, so a
/// test's header block means the same whatever came before.
/// </summary>
internal sealed class Http2Client : IDisposable
{
    private readonly Socket _socket;
    private readonly Stream _stream;
    private readonly byte[] _buffer = new byte[256 * 1024];
    private readonly HPackDecoder _decoder = new(maxHeaderListSize: 1024 * 1024);
    private int _start;
    private int _end;

    private Http2Client(Socket socket, Stream stream)
    {
        _socket = socket;
        _stream = stream;
    }

    public Socket Socket => _socket;

    /// <summary>The server's SETTINGS, once read (parameter id to value).</summary>
    public Dictionary<int, uint> ServerSettings { get; } = new();

    /// <summary>Connects over plain TCP (prior knowledge), or over TLS offering <paramref name="alpn"/> (h2 by default).</summary>
    public static Http2Client Connect(IPEndPoint endPoint, bool tls = false, params SslApplicationProtocol[] alpn)
    {
        var socket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        socket.Connect(endPoint);
        Stream stream = new NetworkStream(socket, ownsSocket: false);
        if (tls)
        {
            var ssl = new SslStream(stream, leaveInnerStreamOpen: false);
            SslClientAuthenticationOptions options = TestCertificates.ClientOptions();
            options.ApplicationProtocols = alpn.Length == 0 ? [SslApplicationProtocol.Http2] : [.. alpn];
            ssl.AuthenticateAsClient(options);
            stream = ssl;
        }

        return new Http2Client(socket, stream);
    }

    /// <summary>Connects to the test server as it serves (TLS with ALPN h2 when it is HTTPS).</summary>
    public static Http2Client Connect(TestServer server) => Connect(server.EndPoint, server.IsHttps);

    /// <summary>The preface, an empty SETTINGS frame and a connection WINDOW_UPDATE that opens the window wide; then reads the server's SETTINGS.</summary>
    public Task StartAsync(bool openWindow = true, params (int Id, uint Value)[] settings) => StartAsync(openWindow, acknowledge: true, settings);

    /// <summary>As <see cref="StartAsync(bool, (int, uint)[])"/>; <paramref name="acknowledge"/> false leaves the server's SETTINGS unacknowledged.</summary>
    public async Task StartAsync(bool openWindow, bool acknowledge, params (int Id, uint Value)[] settings)
    {
        await SendAsync(Encoding.ASCII.GetBytes("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
        await WriteSettingsAsync(settings);
        if (openWindow)
        {
            await WriteWindowUpdateAsync(0, int.MaxValue - 65_535);
        }

        Frame first = await ReadFrameAsync() ?? throw new EndOfStreamException("The server closed instead of sending SETTINGS.");
        if (first.Type != Http2FrameType.Settings || first.HasFlag(Http2FrameFlags.Ack))
        {
            throw new InvalidDataException($"The server's first frame was {first}, not SETTINGS.");
        }

        for (int i = 0; i + 6 <= first.Payload.Length; i += 6)
        {
            ServerSettings[BinaryPrimitives.ReadUInt16BigEndian(first.Payload.AsSpan(i))] = BinaryPrimitives.ReadUInt32BigEndian(first.Payload.AsSpan(i + 2));
        }

        if (acknowledge)
        {
            await WriteFrameAsync(Http2FrameType.Settings, Http2FrameFlags.Ack, 0, []);
        }
    }

    public async Task SendAsync(ReadOnlyMemory<byte> bytes)
    {
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        await _stream.WriteAsync(bytes, timeout.Token);
        await _stream.FlushAsync(timeout.Token);
    }

    /// <summary>
    /// Sends <paramref name="bytes"/> while the caller reads: a flood the server answers frame by frame would otherwise fill
    /// both directions (the server stops reading once its answers reach its output bound). A failed send (the server closed)
    /// is the caller's expected outcome, not an error.
    /// </summary>
    public Task SendInBackground(byte[] bytes) => Task.Run(async () =>
    {
        try
        {
            await SendAsync(bytes);
        }
        catch (Exception exception) when (exception is IOException or SocketException or OperationCanceledException or ObjectDisposedException)
        {
        }
    });

    public Task WriteFrameAsync(Http2FrameType type, Http2FrameFlags flags, int streamId, ReadOnlySpan<byte> payload)
        => SendAsync(FrameBytes(type, flags, streamId, payload));

    /// <summary>One frame as bytes (to send several in one write, or with a length that lies).</summary>
    public static byte[] FrameBytes(Http2FrameType type, Http2FrameFlags flags, int streamId, ReadOnlySpan<byte> payload, int? length = null)
    {
        byte[] frame = new byte[Http2FrameHeader.Size + payload.Length];
        Http2FrameHeader.Write(frame, length ?? payload.Length, type, flags, streamId);
        payload.CopyTo(frame.AsSpan(Http2FrameHeader.Size));
        return frame;
    }

    /// <summary>Frames (or any byte runs) as one array, to send them in one write.</summary>
    public static byte[] Concat(params IEnumerable<byte[]> parts)
    {
        var all = new List<byte>();
        foreach (byte[] part in parts)
        {
            all.AddRange(part);
        }

        return all.ToArray();
    }

    public Task WriteSettingsAsync(params (int Id, uint Value)[] settings)
    {
        byte[] payload = new byte[settings.Length * 6];
        for (int i = 0; i < settings.Length; i++)
        {
            BinaryPrimitives.WriteUInt16BigEndian(payload.AsSpan(i * 6), (ushort)settings[i].Id);
            BinaryPrimitives.WriteUInt32BigEndian(payload.AsSpan(i * 6 + 2), settings[i].Value);
        }

        return WriteFrameAsync(Http2FrameType.Settings, Http2FrameFlags.None, 0, payload);
    }

    public Task WriteHeadersAsync(int streamId, byte[] block, bool endStream, bool endHeaders = true)
        => WriteFrameAsync(Http2FrameType.Headers, (endStream ? Http2FrameFlags.EndStream : 0) | (endHeaders ? Http2FrameFlags.EndHeaders : 0), streamId, block);

    public Task WriteContinuationAsync(int streamId, byte[] fragment, bool endHeaders)
        => WriteFrameAsync(Http2FrameType.Continuation, endHeaders ? Http2FrameFlags.EndHeaders : 0, streamId, fragment);

    public Task WriteDataAsync(int streamId, ReadOnlySpan<byte> data, bool endStream)
        => WriteFrameAsync(Http2FrameType.Data, endStream ? Http2FrameFlags.EndStream : 0, streamId, data);

    public Task WriteRstStreamAsync(int streamId, Http2ErrorCode code) => WriteFrameAsync(Http2FrameType.RstStream, 0, streamId, UInt32((uint)code));

    public Task WriteWindowUpdateAsync(int streamId, int increment) => WriteFrameAsync(Http2FrameType.WindowUpdate, 0, streamId, UInt32((uint)increment));

    public Task WritePingAsync(long data = 0x0102030405060708) => WriteFrameAsync(Http2FrameType.Ping, 0, 0, UInt64((ulong)data));

    public static byte[] UInt32(uint value)
    {
        byte[] bytes = new byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(bytes, value);
        return bytes;
    }

    private static byte[] UInt64(ulong value)
    {
        byte[] bytes = new byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(bytes, value);
        return bytes;
    }

    /// <summary>A header block of literals without indexing and with new names (RFC 7541 section 6.2.2), in the order given.</summary>
    public static byte[] Encode(params (string Name, string Value)[] fields)
    {
        var block = new List<byte>();
        foreach ((string name, string value) in fields)
        {
            block.Add(0x00);
            AddString(block, name);
            AddString(block, value);
        }

        return block.ToArray();
    }

    /// <summary>A request's header block: the four pseudo-headers, then <paramref name="fields"/>.</summary>
    public static byte[] Request(string method = "GET", string path = "/", string authority = "localhost", string scheme = "http", params (string Name, string Value)[] fields)
    {
        var all = new List<(string, string)> { (":method", method), (":scheme", scheme), (":path", path), (":authority", authority) };
        all.AddRange(fields);
        return Encode(all.ToArray());
    }

    private static void AddString(List<byte> block, string text)
    {
        byte[] bytes = Encoding.Latin1.GetBytes(text);
        Span<byte> length = stackalloc byte[6];
        int count = HPackInteger.Encode(bytes.Length, 7, 0x00, length);
        block.AddRange(length[..count].ToArray());
        block.AddRange(bytes);
    }

    /// <summary>The next frame; null when the server closed the connection (a reset counts as closed).</summary>
    public async Task<Frame?> ReadFrameAsync()
    {
        if (!await FillAsync(Http2FrameHeader.Size))
        {
            return null;
        }

        Http2FrameHeader header = Http2FrameHeader.Read(_buffer.AsSpan(_start));
        if (!await FillAsync(Http2FrameHeader.Size + header.Length))
        {
            throw new EndOfStreamException("The connection closed inside a frame.");
        }

        byte[] payload = _buffer.AsSpan(_start + Http2FrameHeader.Size, header.Length).ToArray();
        _start += Http2FrameHeader.Size + header.Length;
        return new Frame(header.Type, header.Flags, header.StreamId, payload);
    }

    /// <summary>Reads frames until one matches; frames of the connection's housekeeping (SETTINGS, PING, WINDOW_UPDATE) are skipped.</summary>
    public async Task<Frame> ReadUntilAsync(Func<Frame, bool> match)
    {
        while (true)
        {
            Frame frame = await ReadFrameAsync() ?? throw new EndOfStreamException("The server closed the connection.");
            if (match(frame))
            {
                return frame;
            }
        }
    }

    /// <summary>The GOAWAY the server sends for a connection error, then its close.</summary>
    public async Task<(Http2ErrorCode Code, int LastStreamId)> ReadGoAwayAsync()
    {
        Frame goAway = await ReadUntilAsync(frame => frame.Type == Http2FrameType.GoAway);
        return ((Http2ErrorCode)BinaryPrimitives.ReadUInt32BigEndian(goAway.Payload.AsSpan(4)),
            (int)(BinaryPrimitives.ReadUInt32BigEndian(goAway.Payload) & 0x7FFF_FFFF));
    }

    /// <summary>The RST_STREAM the server sends for <paramref name="streamId"/>.</summary>
    public async Task<Http2ErrorCode> ReadRstStreamAsync(int streamId)
    {
        Frame reset = await ReadUntilAsync(frame => frame.Type == Http2FrameType.RstStream && frame.StreamId == streamId);
        return (Http2ErrorCode)BinaryPrimitives.ReadUInt32BigEndian(reset.Payload);
    }

    /// <summary>
    /// Reads the response of <paramref name="streamId"/>: its head, DATA until END_STREAM, and trailers; frames of other
    /// streams are kept in <see cref="Others"/>.
    /// </summary>
    public async Task<Http2Response> ReadResponseAsync(int streamId)
    {
        var response = new Http2Response();
        var body = new MemoryStream();
        while (true)
        {
            Frame frame = await ReadFrameAsync() ?? throw new EndOfStreamException($"The server closed before stream {streamId} ended.");
            if (frame.StreamId != streamId)
            {
                if (frame.Type is Http2FrameType.Headers or Http2FrameType.Continuation)
                {
                    // Decoded all the same: the table is the connection's.
                    Decode(frame.Payload, new Dictionary<string, string>());
                }

                Others.Add(frame);
                continue;
            }

            switch (frame.Type)
            {
                case Http2FrameType.Headers:
                    var fields = new Dictionary<string, string>();
                    Decode(frame.Payload, fields);
                    if (fields.Remove(":status", out string? status))
                    {
                        if (status[0] == '1')
                        {
                            response.Interim.Add(int.Parse(status, System.Globalization.CultureInfo.InvariantCulture));
                            continue;
                        }

                        response.StatusCode = int.Parse(status, System.Globalization.CultureInfo.InvariantCulture);
                        response.Headers = fields;
                    }
                    else
                    {
                        response.Trailers = fields;
                    }

                    break;
                case Http2FrameType.Data:
                    body.Write(frame.Payload);
                    response.DataFrames++;
                    break;
                case Http2FrameType.RstStream:
                    response.Reset = (Http2ErrorCode)BinaryPrimitives.ReadUInt32BigEndian(frame.Payload);
                    response.Body = body.ToArray();
                    return response;
                default:
                    continue;
            }

            if (frame.HasFlag(Http2FrameFlags.EndStream))
            {
                response.Body = body.ToArray();
                return response;
            }
        }
    }

    /// <summary>Frames of other streams seen while <see cref="ReadResponseAsync"/> read one stream.</summary>
    public List<Frame> Others { get; } = new();

    private void Decode(byte[] block, Dictionary<string, string> fields)
    {
        var handler = new FieldCollector(fields);
        HPackDecodeResult result = _decoder.Decode(block, ref handler);
        if (result != HPackDecodeResult.Success)
        {
            throw new InvalidDataException($"The server's header block did not decode: {result}.");
        }
    }

    /// <summary>True when the server closes the connection (end of stream or reset) within the timeout, skipping frames before.</summary>
    public async Task<bool> IsClosedAsync()
    {
        try
        {
            while (await ReadFrameAsync() is not null)
            {
            }

            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    private async Task<bool> FillAsync(int count)
    {
        if (_end - _start >= count)
        {
            return true;
        }

        if (_start > 0)
        {
            Array.Copy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }

        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        while (_end < count)
        {
            int read;
            try
            {
                read = await _stream.ReadAsync(_buffer.AsMemory(_end), timeout.Token);
            }
            catch (IOException exception) when (exception.InnerException is SocketException)
            {
                return false;
            }

            if (read == 0)
            {
                return false;
            }

            _end += read;
        }

        return true;
    }

    public void Dispose()
    {
        _stream.Dispose();
        _socket.Dispose();
        _decoder.Dispose();
    }

    private readonly struct FieldCollector(Dictionary<string, string> fields) : IHPackHeaderHandler
    {
        public int ResolveSlot(ReadOnlySpan<byte> name) => -1;

        public void OnPseudoHeader(PseudoHeader header, ReadOnlySpan<byte> value)
            => fields[":" + header.ToString().ToLowerInvariant()] = Encoding.Latin1.GetString(value);

        public void OnHeader(int slot, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, ulong valueId)
        {
            string key = Encoding.Latin1.GetString(name);
            string text = Encoding.Latin1.GetString(value);
            fields[key] = fields.TryGetValue(key, out string? before) ? before + ", " + text : text;
        }
    }
}

/// <summary>One frame the server sent.</summary>
internal sealed record Frame(Http2FrameType Type, Http2FrameFlags Flags, int StreamId, byte[] Payload)
{
    public bool HasFlag(Http2FrameFlags flag) => (Flags & flag) != 0;

    public override string ToString() => $"{Type} (flags 0x{(byte)Flags:x2}, stream {StreamId}, {Payload.Length} bytes)";
}

/// <summary>A response read from an HTTP/2 stream.</summary>
internal sealed class Http2Response
{
    public int StatusCode { get; set; }

    public List<int> Interim { get; } = new();

    public Dictionary<string, string> Headers { get; set; } = new();

    public Dictionary<string, string>? Trailers { get; set; }

    public byte[] Body { get; set; } = [];

    public int DataFrames { get; set; }

    /// <summary>The RST_STREAM code when the stream was reset instead of ending.</summary>
    public Http2ErrorCode? Reset { get; set; }

    public string BodyText => Encoding.UTF8.GetString(Body);
}
