// The answers' readers and the types they give (PhotoSearchPage, PhotoSourceError, …) are this
// module's vocabulary too: whoever imports PhotoSources has them.
@_exported import PhotoAnswers
