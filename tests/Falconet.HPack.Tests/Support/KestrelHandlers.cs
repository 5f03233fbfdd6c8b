using System;
using System.Collections.Generic;
using System.Text;
using Falconet.Http;
using Falconet.Http.Http2.HPack;

namespace Falconet.HPack.Tests.Support;

/// <summary>Records what Kestrel's decoder hands its handler, as "name: value" in the form <see cref="Recording"/> uses.</summary>
public class KestrelRecordingHandler
{
    public KestrelRecordingHandler(List<string> fields) => Fields = fields;

    public List<string> Fields { get; }

    public void OnStaticIndexedHeader(int index) =>
        Fields.Add(Encoding.Latin1.GetString(HPackStaticTable.GetName(index)) + ": " + Encoding.Latin1.GetString(HPackStaticTable.GetValue(index)));

    public void OnStaticIndexedHeader(int index, ReadOnlySpan<byte> value) =>
        Fields.Add(Encoding.Latin1.GetString(HPackStaticTable.GetName(index)) + ": " + Encoding.Latin1.GetString(value));

    public void OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) =>
        Fields.Add(Encoding.Latin1.GetString(name) + ": " + Encoding.Latin1.GetString(value));

    public void OnHeadersComplete(bool endStream)
    {
    }

    public void OnDynamicIndexedHeader(int? index, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => OnHeader(name, value);
}

/// <summary>
/// What a server's stream does with Kestrel's decoder: each field into the header collection, through the same path as
/// Falconet's handler (a static entry's slot from the static table, as Kestrel's own collection does; other names through
/// the set's matcher; then <c>TryAppendMatched</c>); pseudo-headers counted.
/// </summary>
public class KestrelStoringHandler
{
    private readonly RequestHeaders _headers;

    public KestrelStoringHandler(RequestHeaders headers) => _headers = headers;

    public int PseudoHeaders { get; private set; }

    public void OnStaticIndexedHeader(int index) => OnStaticIndexedHeader(index, HPackStaticTable.GetValue(index));

    public void OnStaticIndexedHeader(int index, ReadOnlySpan<byte> value)
    {
        byte slot = HPackStaticTable.RequestSlots[index];
        if (slot >= HPackFieldNames.PseudoHeaderFlag && slot != HPackFieldNames.Unresolved)
        {
            PseudoHeaders++;
            return;
        }

        ReadOnlySpan<byte> name = HPackStaticTable.GetName(index);
        _headers.TryAppendMatched(slot == HPackFieldNames.Unresolved ? RequestHeaders.IndexOf(name) : slot, name, value);
    }

    public void OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (name.Length > 0 && name[0] == (byte)':')
        {
            PseudoHeaders++;
            return;
        }

        _headers.TryAppendMatched(RequestHeaders.IndexOf(name), name, value);
    }

    public void OnHeadersComplete(bool endStream)
    {
    }

    public void OnDynamicIndexedHeader(int? index, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => OnHeader(name, value);
}
