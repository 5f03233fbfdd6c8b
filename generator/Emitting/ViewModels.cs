using System.Collections.Generic;

namespace Falconet.Generator.Emitting;

// Plain data handed to the templates: every value is already formatted text, so templates only place it.

/// <summary>Values shared by every emitted file.</summary>
internal sealed class FileView
{
    public string GeneratorVersion { get; set; } = string.Empty;
    public string SchemaHash { get; set; } = string.Empty;
    public string Namespace { get; set; } = string.Empty;
    public string Visibility { get; set; } = string.Empty;

    /// <summary>The [GeneratedCode] attribute every emitted type carries.</summary>
    public string GeneratedCode { get; set; } = string.Empty;

    /// <summary>The runtime class whose Read64/32/16/8 the matchers compare.</summary>
    public string Reads { get; set; } = string.Empty;
}

/// <summary>Data of KnownMethods.g.cs.</summary>
internal sealed class MethodsView
{
    public FileView File { get; set; } = new();
    public List<MethodView> Methods { get; } = new();
    public string TokenBytes { get; set; } = string.Empty;
}

/// <summary>One method of KnownMethods.g.cs.</summary>
internal sealed class MethodView
{
    public string Member { get; set; } = string.Empty;
    public string Literal { get; set; } = string.Empty;
    public string Length { get; set; } = string.Empty;
    public List<string> Lines { get; } = new();
}

/// <summary>Data of KnownVersions.g.cs.</summary>
internal sealed class VersionsView
{
    public FileView File { get; set; } = new();
    public List<VersionView> Versions { get; } = new();
}

/// <summary>One version of KnownVersions.g.cs.</summary>
internal sealed class VersionView
{
    public string Member { get; set; } = string.Empty;
    public string Literal { get; set; } = string.Empty;
    public string Value { get; set; } = string.Empty;
    public string Comment { get; set; } = string.Empty;
}

/// <summary>Data of RequestHeaders.g.cs and ResponseHeaders.g.cs (the runtime's built-in collections).</summary>
internal sealed class HeadersView
{
    public FileView File { get; set; } = new();
    public string TypeName { get; set; } = string.Empty;
    public string BaseType { get; set; } = string.Empty;
    public string Summary { get; set; } = string.Empty;
    public TableView Table { get; set; } = new();
    public List<HeaderView> Properties { get; } = new();

    /// <summary>The name matcher; null for a collection that is never parsed.</summary>
    public MatcherView? Matcher { get; set; }
}

/// <summary>Data of HeaderSet.g.cs: an app's own header set and the typed properties of its own headers.</summary>
internal sealed class HeaderSetView
{
    public FileView File { get; set; } = new();
    public string TypeName { get; set; } = string.Empty;
    public string ExtensionsName { get; set; } = string.Empty;
    public TableView RequestTable { get; set; } = new();
    public TableView ResponseTable { get; set; } = new();
    public MatcherView RequestMatcher { get; set; } = new();
    public List<ExtensionView> Extensions { get; } = new();
    public bool HasProperties => Extensions.Count > 0;
}

/// <summary>An extension block: the typed properties of an app's own headers on one collection type.</summary>
internal sealed class ExtensionView
{
    public string Receiver { get; set; } = string.Empty;
    public List<HeaderView> Properties { get; } = new();
}

/// <summary>The lines of a HeaderTable construction in bit order: names, or for a parsed collection each name with its known values.</summary>
internal sealed class TableView
{
    public List<string> NameLines { get; } = new();
    public List<string> KnownValueLines { get; } = new();
    public bool HasKnownValues { get; set; }
}

/// <summary>A typed property of one known header: on the collection itself, or as an extension property of it.</summary>
internal sealed class HeaderView
{
    public string Literal { get; set; } = string.Empty;
    public string Property { get; set; } = string.Empty;
    public string Index { get; set; } = string.Empty;

    /// <summary>The indentation of the property's lines.</summary>
    public string Indent { get; set; } = string.Empty;

    // The braces are whole values: "{{Indent}}}" would read as the end of a triple-stash.
    public string Open => Indent + "{";

    public string Close => Indent + "}";

    /// <summary>"" on the collection itself; "headers." in an extension block.</summary>
    public string Receiver { get; set; } = string.Empty;
}

/// <summary>A name matcher: a switch on the length, then the masked compares of each bucket.</summary>
internal sealed class MatcherView
{
    public List<BucketView> Buckets { get; } = new();
}

/// <summary>The headers of one name length: the chunk reads they share (one statement each) and their compares.</summary>
internal sealed class BucketView
{
    public string Length { get; set; } = string.Empty;
    public List<string> Reads { get; } = new();
    public List<MatchView> Matches { get; } = new();
}

/// <summary>The masked compares of one header in its bucket and the index it yields.</summary>
internal sealed class MatchView
{
    public string Index { get; set; } = string.Empty;
    public string Name { get; set; } = string.Empty;
    public List<string> Lines { get; } = new();
}

/// <summary>Data of HPackStaticTable.g.cs: one formatted line per table entry, response header and status.</summary>
internal sealed class HPackStaticTableView
{
    public FileView File { get; set; } = new();
    public string Namespace { get; set; } = string.Empty;
    public string Count { get; set; } = string.Empty;
    public string StatusNameIndex { get; set; } = string.Empty;
    public string ContentLengthIndex { get; set; } = string.Empty;
    public List<string> RequestSlotLines { get; } = new();
    public List<string> NameLines { get; } = new();
    public List<string> ValueLines { get; } = new();
    public List<string> ResponseNameLines { get; } = new();
    public List<string> StatusLines { get; } = new();
    public List<ResponseValueCaseView> ResponseValueCases { get; } = new();
    public bool HasResponseValues => ResponseValueCases.Count > 0;
}

/// <summary>The response header values of one bit index that are whole static table entries.</summary>
internal sealed class ResponseValueCaseView
{
    public string BitIndex { get; set; } = string.Empty;
    public string Name { get; set; } = string.Empty;
    public List<string> Lines { get; } = new();
}

/// <summary>Data of HPackHuffman.g.cs: the encoder's codes and the decoder's window table and long-code tree, a line per entry.</summary>
internal sealed class HPackHuffmanView
{
    public FileView File { get; set; } = new();
    public string Namespace { get; set; } = string.Empty;
    public string PeekBits { get; set; } = string.Empty;
    public string WindowCount { get; set; } = string.Empty;
    public string TreeNodeCount { get; set; } = string.Empty;
    public List<string> CodeLines { get; } = new();
    public List<string> WindowLines { get; } = new();
    public List<string> TreeLines { get; } = new();
}
