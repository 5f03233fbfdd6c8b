using System;

namespace Falconet.Http.Http2;

/// <summary>The frame types of RFC 9113 section 6; any other value is an extension frame, ignored (section 5.5).</summary>
internal enum Http2FrameType : byte
{
    Data = 0x0,
    Headers = 0x1,
    Priority = 0x2,
    RstStream = 0x3,
    Settings = 0x4,
    PushPromise = 0x5,
    Ping = 0x6,
    GoAway = 0x7,
    WindowUpdate = 0x8,
    Continuation = 0x9,
}

/// <summary>The flags of RFC 9113 section 6; what a bit means depends on the frame type.</summary>
[Flags]
internal enum Http2FrameFlags : byte
{
    None = 0x0,

    /// <summary>SETTINGS and PING: an acknowledgement.</summary>
    Ack = 0x1,

    /// <summary>DATA and HEADERS: the last frame of the stream from its sender.</summary>
    EndStream = 0x1,

    /// <summary>HEADERS and CONTINUATION: the last frame of the header block.</summary>
    EndHeaders = 0x4,

    /// <summary>DATA and HEADERS: a pad length byte leads the payload.</summary>
    Padded = 0x8,

    /// <summary>HEADERS: exclusive flag, stream dependency and weight lead the header block.</summary>
    Priority = 0x20,
}
