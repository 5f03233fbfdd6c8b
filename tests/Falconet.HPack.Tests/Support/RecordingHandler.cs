using System;
using System.Collections.Generic;
using System.Text;
using Falconet.Http;
using Falconet.Http.Http2.HPack;

namespace Falconet.HPack.Tests.Support;

/// <summary>What a decoder handed a handler: every field as "name: value" text, with the slot it came with, and every name it asked about.</summary>
internal sealed class Recording
{
    public List<string> Fields { get; } = new();

    public List<int> Slots { get; } = new();

    public List<string> Resolved { get; } = new();

    public void Clear()
    {
        Fields.Clear();
        Slots.Clear();
        Resolved.Clear();
    }
}

/// <summary>A struct handler that records fields and resolves names with the default schema's matcher, as the server's does.</summary>
internal readonly struct RecordingHandler(Recording recording) : IHPackHeaderHandler
{
    public int ResolveSlot(ReadOnlySpan<byte> name)
    {
        recording.Resolved.Add(Encoding.Latin1.GetString(name));
        return RequestHeaders.IndexOf(name);
    }

    public void OnPseudoHeader(PseudoHeader header, ReadOnlySpan<byte> value)
    {
        recording.Fields.Add(":" + header.ToString().ToLowerInvariant() + ": " + Encoding.Latin1.GetString(value));
        recording.Slots.Add(-2);
    }

    public void OnHeader(int slot, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        recording.Fields.Add(Encoding.Latin1.GetString(name) + ": " + Encoding.Latin1.GetString(value));
        recording.Slots.Add(slot);
    }
}

/// <summary>A decoder and what it delivered, block after block, as a connection uses one.</summary>
internal sealed class DecoderSession : IDisposable
{
    public DecoderSession(int maxDynamicTableSize = HPackDecoder.DefaultMaxDynamicTableSize, int maxHeaderListSize = HPackDecoder.DefaultMaxHeaderListSize,
        int maxStringLength = HPackDecoder.DefaultMaxStringLength)
    {
        Decoder = new HPackDecoder(maxDynamicTableSize, maxHeaderListSize, maxStringLength);
    }

    public HPackDecoder Decoder { get; }

    public Recording Recording { get; } = new();

    /// <summary>Decodes one block after clearing what the previous one delivered.</summary>
    public HPackDecodeResult Decode(byte[] block)
    {
        Recording.Clear();
        var handler = new RecordingHandler(Recording);
        return Decoder.Decode(block, ref handler);
    }

    public HPackDecodeResult Decode(string hex) => Decode(Hex.Bytes(hex));

    public void Dispose() => Decoder.Dispose();
}
