using System;

namespace Falconet.Http;

/// <summary>
/// The HTTP/2 settings the server advertises and the bounds it holds a peer to (RFC 9113 and the known HTTP/2 attacks). Each
/// bound has a default that serves browsers and common clients; a peer past one gets the error documented in
/// docs/http-server.md ("HTTP/2"). The header list itself is bounded by <see cref="HttpLimits.MaxRequestHeadersSize"/> and
/// <see cref="HttpLimits.MaxRequestHeaderCount"/>, as on HTTP/1.1.
/// </summary>
public sealed class Http2Limits
{
    /// <summary>SETTINGS_MAX_CONCURRENT_STREAMS (default 100): streams a client may have open at once; one more is refused with REFUSED_STREAM.</summary>
    public int MaxConcurrentStreams { get; set; } = 100;

    /// <summary>
    /// The connection's receive window (default 1 MiB): request body bytes of all streams the server buffers before the
    /// handlers read them. Announced with a WINDOW_UPDATE right after the server's SETTINGS.
    /// </summary>
    public int InitialConnectionWindowSize { get; set; } = 1024 * 1024;

    /// <summary>SETTINGS_INITIAL_WINDOW_SIZE (default 768 KiB): request body bytes of one stream the server buffers before its handler reads them.</summary>
    public int InitialStreamWindowSize { get; set; } = 768 * 1024;

    /// <summary>SETTINGS_MAX_FRAME_SIZE (default 16 KiB, the protocol's least): the largest frame payload the server accepts; a larger frame is a FRAME_SIZE_ERROR.</summary>
    public int MaxFrameSize { get; set; } = 16 * 1024;

    /// <summary>SETTINGS_HEADER_TABLE_SIZE (default 4096): the most the client's HPACK encoder may keep in the server decoder's dynamic table.</summary>
    public int HeaderTableSize { get; set; } = 4096;

    /// <summary>
    /// The largest header block (HEADERS and its CONTINUATION frames, compressed, default 64 KiB) the server assembles before
    /// it decodes it; a larger one closes the connection with ENHANCE_YOUR_CALM (the CONTINUATION flood).
    /// </summary>
    public int MaxHeaderBlockSize { get; set; } = 64 * 1024;

    /// <summary>The most CONTINUATION frames one header block may have (default 32); one more closes the connection with ENHANCE_YOUR_CALM.</summary>
    public int MaxContinuationFrames { get; set; } = 32;

    /// <summary>
    /// Stream resets a connection may cause (default a burst of 1,000, then 33 per second): RST_STREAM frames the client
    /// sends, and streams the server resets or refuses because of the client's errors. Past it the connection closes
    /// with ENHANCE_YOUR_CALM (rapid reset, CVE-2023-44487, and resets provoked on purpose).
    /// </summary>
    public Http2FrameRate StreamResetRate { get; set; } = new(1000, 33);

    /// <summary>PING and SETTINGS frames a connection may send that the server must answer (default a burst of 200, then 20 per second); past it, ENHANCE_YOUR_CALM.</summary>
    public Http2FrameRate ControlFrameRate { get; set; } = new(200, 20);

    /// <summary>
    /// Frames that carry nothing (DATA without payload or END_STREAM, HEADERS or CONTINUATION with an empty fragment and no
    /// END_HEADERS) a connection may send (default a burst of 100, then 10 per second); past it, ENHANCE_YOUR_CALM.
    /// </summary>
    public Http2FrameRate EmptyFrameRate { get; set; } = new(100, 10);

    /// <summary>How long the client may take to acknowledge the server's SETTINGS (default 10 s); then SETTINGS_TIMEOUT.</summary>
    public TimeSpan SettingsAckTimeout { get; set; } = TimeSpan.FromSeconds(10);

    internal Http2Limits Copy() => new()
    {
        MaxConcurrentStreams = MaxConcurrentStreams,
        InitialConnectionWindowSize = InitialConnectionWindowSize,
        InitialStreamWindowSize = InitialStreamWindowSize,
        MaxFrameSize = MaxFrameSize,
        HeaderTableSize = HeaderTableSize,
        MaxHeaderBlockSize = MaxHeaderBlockSize,
        MaxContinuationFrames = MaxContinuationFrames,
        StreamResetRate = StreamResetRate,
        ControlFrameRate = ControlFrameRate,
        EmptyFrameRate = EmptyFrameRate,
        SettingsAckTimeout = SettingsAckTimeout,
    };

    internal void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxConcurrentStreams, 1, nameof(MaxConcurrentStreams));
        ValidateWindow(InitialConnectionWindowSize, 65_535, nameof(InitialConnectionWindowSize));
        ValidateWindow(InitialStreamWindowSize, 1, nameof(InitialStreamWindowSize));
        if (MaxFrameSize is < 16 * 1024 or > (1 << 24) - 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxFrameSize), MaxFrameSize, "SETTINGS_MAX_FRAME_SIZE is between 16,384 and 16,777,215 (RFC 9113 section 6.5.2).");
        }

        ArgumentOutOfRangeException.ThrowIfNegative(HeaderTableSize, nameof(HeaderTableSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxHeaderBlockSize, 1, nameof(MaxHeaderBlockSize));
        ArgumentOutOfRangeException.ThrowIfNegative(MaxContinuationFrames, nameof(MaxContinuationFrames));
        StreamResetRate.Validate(nameof(StreamResetRate));
        ControlFrameRate.Validate(nameof(ControlFrameRate));
        EmptyFrameRate.Validate(nameof(EmptyFrameRate));
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(SettingsAckTimeout, TimeSpan.Zero, nameof(SettingsAckTimeout));
    }

    private static void ValidateWindow(int value, int least, string name)
    {
        // A window above 2^31-1 cannot be announced (RFC 9113 section 6.9.1); int already stops there.
        ArgumentOutOfRangeException.ThrowIfLessThan(value, least, name);
    }
}

/// <summary>A bound on how often a connection may send a kind of frame: a burst, refilled at a steady rate per second (a token bucket).</summary>
/// <param name="Burst">How many the connection may send at once.</param>
/// <param name="PerSecond">How many more it may send each second after the burst.</param>
public readonly record struct Http2FrameRate(int Burst, int PerSecond)
{
    internal void Validate(string name)
    {
        if (Burst < 1 || PerSecond < 0)
        {
            throw new ArgumentOutOfRangeException(name, this, "A frame rate needs a burst of at least 1 and a rate of at least 0 per second.");
        }
    }
}
